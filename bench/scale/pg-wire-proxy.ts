/**
 * A counting TCP proxy in front of PostgreSQL, run as its own process so its CPU time is kept
 * apart from what it measures. It forwards bytes untouched and reads only the message headers of
 * the wire protocol: statements by their CommandComplete tag, bytes each way, NOTIFYs received,
 * and how long each connection is busy (from a request on an idle connection to the next
 * ReadyForQuery that says idle; a connection inside a transaction stays busy).
 *
 *   tsx bench/scale/pg-wire-proxy.ts <postgres host> <postgres port>
 *
 * Prints `listening <port>`, then answers each `stats` line on stdin with one JSON line.
 */
import { createServer, connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';

export interface ProxyStats {
  readonly connections: number;
  readonly clientBytes: number;
  readonly serverBytes: number;
  /** Statements completed, by the first word of their tag (INSERT, UPDATE, SELECT, BEGIN …); ERROR for failed ones. */
  readonly statements: Record<string, number>;
  /** NotificationResponse messages, by the payload's topic (`events`, `cancel`, `agent` …). */
  readonly notifications: Record<string, number>;
  /** Sum over connections of the time each was busy, in ms. */
  readonly busyMs: number;
  /** Busy periods that ended idle: one per autocommit statement or committed (or rolled back) transaction. */
  readonly transactions: number;
}

const [host = '127.0.0.1', portText = '5432'] = process.argv.slice(2);
// A Ctrl-C reaches the whole process group: the benchmark still needs its counters while it cleans up, and ends this process through stdin.
process.on('SIGINT', () => undefined);
const targetPort = Number(portText);

let connections = 0;
let clientBytes = 0;
let serverBytes = 0;
let busyMs = 0;
let transactions = 0;
const statements: Record<string, number> = {};
const notifications: Record<string, number> = {};
const bump = (counts: Record<string, number>, key: string): void => {
  counts[key] = (counts[key] ?? 0) + 1;
};

/**
 * Splits a byte stream into wire-protocol messages: a type byte and an int32 length that counts
 * itself. `untyped` messages come first (the startup packet has no type byte). Calls `onMessage`
 * with the type and, for the types in `keep`, the body.
 */
class MessageReader {
  #untyped: number;
  readonly #keep: ReadonlySet<number>;
  readonly #onMessage: (type: number, body: Buffer | undefined) => void;
  #header = Buffer.alloc(5);
  #headerFill = 0;
  #type = 0;
  #remaining = 0;
  #body: Buffer | undefined;
  #bodyFill = 0;
  #inBody = false;

  constructor(options: { untyped: number; keep: readonly string[]; onMessage: (type: number, body: Buffer | undefined) => void }) {
    this.#untyped = options.untyped;
    this.#keep = new Set(options.keep.map((letter) => letter.charCodeAt(0)));
    this.#onMessage = options.onMessage;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (!this.#inBody) {
        const headerSize = this.#untyped > 0 ? 4 : 5;
        const take = Math.min(headerSize - this.#headerFill, chunk.length - at);
        chunk.copy(this.#header, this.#headerFill, at, at + take);
        this.#headerFill += take;
        at += take;
        if (this.#headerFill < headerSize) return;
        if (this.#untyped > 0) {
          this.#type = 0;
          this.#remaining = this.#header.readInt32BE(0) - 4;
        } else {
          this.#type = this.#header[0]!;
          this.#remaining = this.#header.readInt32BE(1) - 4;
        }
        this.#headerFill = 0;
        this.#inBody = true;
        this.#body = this.#keep.has(this.#type) ? Buffer.alloc(this.#remaining) : undefined;
        this.#bodyFill = 0;
      }
      const take = Math.min(this.#remaining, chunk.length - at);
      if (this.#body !== undefined) chunk.copy(this.#body, this.#bodyFill, at, at + take);
      this.#bodyFill += take;
      this.#remaining -= take;
      at += take;
      if (this.#remaining > 0) return;
      this.#inBody = false;
      if (this.#untyped > 0) this.#untyped -= 1;
      else this.#onMessage(this.#type, this.#body);
    }
  }
}

const C = 'C'.charCodeAt(0);
const E = 'E'.charCodeAt(0);
const A = 'A'.charCodeAt(0);
const Z = 'Z'.charCodeAt(0);

const server = createServer((client: Socket) => {
  connections += 1;
  const upstream = connect(targetPort, host);
  let busySince: number | undefined;
  const fromClient = new MessageReader({
    untyped: 1,
    keep: [],
    onMessage: () => {
      busySince ??= performance.now();
    },
  });
  const fromServer = new MessageReader({
    untyped: 0,
    keep: ['C', 'A', 'Z'],
    onMessage: (type, body) => {
      if (type === C && body !== undefined) {
        const tag = body.toString('latin1', 0, Math.max(0, body.length - 1));
        const space = tag.indexOf(' ');
        bump(statements, space < 0 ? tag : tag.slice(0, space));
      } else if (type === E) bump(statements, 'ERROR');
      else if (type === A && body !== undefined) {
        // int32 pid, channel\0, payload\0
        const channelEnd = body.indexOf(0, 4);
        const payload = body.toString('utf8', channelEnd + 1, Math.max(channelEnd + 1, body.length - 1));
        const colon = payload.indexOf(':');
        bump(notifications, colon < 0 ? payload : payload.slice(0, colon));
      } else if (type === Z && body !== undefined && body[0] === 'I'.charCodeAt(0) && busySince !== undefined) {
        busyMs += performance.now() - busySince;
        busySince = undefined;
        transactions += 1;
      }
    },
  });
  client.on('data', (chunk: Buffer) => {
    clientBytes += chunk.length;
    fromClient.push(chunk);
    if (!upstream.write(chunk)) client.pause();
  });
  upstream.on('data', (chunk: Buffer) => {
    serverBytes += chunk.length;
    fromServer.push(chunk);
    if (!client.write(chunk)) upstream.pause();
  });
  upstream.on('drain', () => client.resume());
  client.on('drain', () => upstream.resume());
  const close = (): void => {
    client.destroy();
    upstream.destroy();
  };
  client.on('close', close);
  upstream.on('close', close);
  client.on('error', close);
  upstream.on('error', close);
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`listening ${address.port}\n`);
});

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'stats') {
    const stats: ProxyStats = { connections, clientBytes, serverBytes, statements: { ...statements }, notifications: { ...notifications }, busyMs, transactions };
    process.stdout.write(`${JSON.stringify(stats)}\n`);
  }
  if (line === 'exit') break;
}
process.exit(0);
