import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * The MCP project's reference server, `@modelcontextprotocol/server-everything` (a dev
 * dependency): every protocol feature, some of it stateful per session
 * (`toggle-simulated-logging`), and a tool that runs only as a task (`simulate-research-query`).
 */
export const EVERYTHING_ENTRY = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');

/** Its launch settings over stdio, for an MCP config file. */
export function everythingStdio(): { transport: 'stdio'; command: string; args: string[] } {
  return { transport: 'stdio', command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] };
}

/*
 * The reference server listens on every interface at $PORT. This preload makes any server it
 * starts listen on 127.0.0.1 only (on the port asked for, or any free one for 0) and says
 * which port on stderr, so the tests never open a port beyond loopback.
 */
const LOOPBACK_ONLY = `
import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (port, ...rest) {
  const callback = rest.find((argument) => typeof argument === 'function');
  this.once('listening', () => process.stderr.write('loopback-port=' + this.address().port + '\\n'));
  return listen.call(this, Number(port), '127.0.0.1', callback);
};
`;

export interface EverythingHttpServer {
  /** The Streamable HTTP endpoint, on 127.0.0.1. */
  readonly url: string;
  /** Stops the process and starts a new one on the same port: every session is forgotten. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Starts the reference server over Streamable HTTP on a free loopback port, in its own process. */
export async function startEverythingHttp(): Promise<EverythingHttpServer> {
  let child: ChildProcess | undefined;
  let port = 0;
  const start = async () => {
    const started = spawn(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(LOOPBACK_ONLY)}`, EVERYTHING_ENTRY, 'streamableHttp'], {
      env: { PATH: process.env['PATH'] ?? '', PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    child = started;
    port = await new Promise<number>((resolve, reject) => {
      let text = '';
      started.stderr.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const found = /loopback-port=(\d+)/.exec(text);
        if (found !== null) resolve(Number(found[1]));
      });
      started.once('exit', (code) => {
        reject(new Error(`server-everything exited (${String(code)}) before listening: ${text.slice(-500)}`));
      });
    });
  };
  const stop = async () => {
    const running = child;
    child = undefined;
    if (running?.pid === undefined || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => {
      running.once('exit', () => {
        resolve();
      });
    });
    process.kill(-running.pid, 'SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    restart: async () => {
      await stop();
      await start();
    },
    close: stop,
  };
}
