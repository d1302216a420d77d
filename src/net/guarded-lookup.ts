import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress } from './address-policy.js';
import { WebRequestError } from './web-request-error.js';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has; injectable so tests need no DNS. */
export type HostLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The operating system's resolver (`getaddrinfo`, so `/etc/hosts` counts), every address. */
export const systemHostLookup: HostLookup = async (hostname) => {
  const addresses = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return addresses.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));
};

/**
 * Builds the `lookup` that `node:http`/`node:https` call while opening the socket. Every
 * address the name resolves to is checked, and the socket is only given addresses from
 * this one answer, so there is no second resolution a DNS-rebinding server could answer
 * differently. One refused address refuses the whole name: Node may fall back to any of
 * them (happy eyeballs), so "the first one is public" proves nothing.
 */
export function createGuardedLookup(options: {
  readonly lookup: HostLookup;
  /** False for allow-listed hosts: resolve, but do not judge the addresses. */
  readonly checkAddresses: boolean;
}): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolveChecked(hostname, lookupOptions, options).then(
      (addresses) => {
        const [first] = addresses;
        if (lookupOptions.all === true) callback(null, addresses);
        else if (first !== undefined) callback(null, first.address, first.family);
      },
      (error: unknown) => {
        callback(error instanceof Error ? error : new Error(String(error)), '');
      },
    );
  };
}

async function resolveChecked(
  hostname: string,
  lookupOptions: LookupOptions,
  options: { readonly lookup: HostLookup; readonly checkAddresses: boolean },
): Promise<LookupAddress[]> {
  let resolved: readonly ResolvedAddress[];
  try {
    resolved = await options.lookup(hostname);
  } catch (error) {
    throw new WebRequestError('dns', `could not resolve ${hostname}`, { cause: error });
  }
  const checked: LookupAddress[] = [];
  for (const entry of resolved) {
    // The family is read from the address itself; a resolver's own label is not trusted.
    const family = isIP(entry.address);
    if (family === 0) throw new WebRequestError('dns', `${hostname} resolved to "${entry.address}", which is not an IP address`);
    if (options.checkAddresses) {
      const verdict = classifyAddress(entry.address);
      if (!verdict.allowed) {
        throw new WebRequestError(
          'refused-address',
          `refused ${hostname}: it resolves to ${verdict.explanation}; only public internet addresses can be fetched`,
        );
      }
    }
    checked.push({ address: entry.address, family });
  }
  const wanted = wantedFamily(lookupOptions.family);
  const usable = checked.filter((entry) => wanted === undefined || entry.family === wanted);
  if (usable.length === 0) throw new WebRequestError('dns', `${hostname} has no usable address`);
  return usable;
}

function wantedFamily(family: LookupOptions['family']): 4 | 6 | undefined {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return undefined;
}
