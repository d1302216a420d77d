import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackServer {
  readonly port: number;
  /** `host:port`, as an allow-list entry. */
  readonly host: string;
  url(path?: string): string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** HTTP requests received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that counts what reaches it. */
export async function startLoopbackServer(
  handler: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => {
    response.end('reached');
  },
): Promise<LoopbackServer> {
  let connections = 0;
  let requests = 0;
  const server: Server = createServer((request, response) => {
    requests += 1;
    handler(request, response);
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    host: `127.0.0.1:${port}`,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    get connections() {
      return connections;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}

/** A resolver that answers from a table and records what it was asked. */
export function tableLookup(table: Readonly<Record<string, readonly string[]>>): {
  readonly lookup: (hostname: string) => Promise<readonly { address: string; family: 4 | 6 }[]>;
  readonly asked: string[];
} {
  const asked: string[] = [];
  return {
    asked,
    lookup: (hostname) => {
      asked.push(hostname);
      const addresses = Object.prototype.hasOwnProperty.call(table, hostname) ? table[hostname] : undefined;
      if (addresses === undefined) return Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }));
      return Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? (6 as const) : (4 as const) })));
    },
  };
}
