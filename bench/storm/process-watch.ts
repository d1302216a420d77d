/**
 * Watches this machine's processes for those of the storm's commands, from outside the service:
 * every few milliseconds it lists /proc, and each process it has not seen before is read once
 * (its command line and environment) for a turn's label. A command's own processes carry the
 * label in their environment (the command exports it first, and children inherit it); the
 * launcher, bwrap and the shell carry it in their command line. A zombie (state Z) no longer
 * runs and counts as gone; one is only looked for among the processes of turns whose client
 * has left, which keeps a scan cheap.
 *
 * A turn's processes are gone at the first scan that finds none of them after one that did,
 * so the figure is late by at most one scan period (plus the scan's own time). A process seen
 * without a label is read again while it is young: it may have been forked and not exec'd yet.
 */
import { readdirSync, readFileSync } from 'node:fs';

const LABEL = /storm-[0-9a-z]+-\d+/;
/** A process without a label is read again until it is this old (fork, then exec). */
const YOUNG_MS = 250;

interface Sighting {
  /** Wall-clock ms of the last scan that found one of the label's processes running. */
  lastAliveAt: number;
  /** Wall-clock ms of the first scan after that which found none, while none is found. */
  goneAt: number | undefined;
  pids: Set<number>;
}

export class ProcessWatch {
  readonly #labels = new Map<string, Sighting>();
  /** pid → the label it carries (null: none), and when it was first seen. */
  readonly #known = new Map<number, { label: string | null; seenAt: number }>();
  readonly #departed = new Set<string>();
  readonly #wallClock: () => number;
  #timer: NodeJS.Timeout | undefined;
  #scans = 0;
  #scanMs = 0;

  constructor(options: { readonly wallClock: () => number }) {
    this.#wallClock = options.wallClock;
  }

  /** Scans every `intervalMs` until `stop()`. */
  start(intervalMs: number): void {
    const tick = (): void => {
      this.scan();
      this.#timer = setTimeout(tick, intervalMs);
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }

  /** The client of `label` has left: from now on its processes are also checked for being zombies. */
  departed(label: string): void {
    this.#departed.add(label);
  }

  /** When `label`'s processes were last seen running, and when they were first seen gone after that. */
  sighting(label: string): { readonly lastAliveAt: number; readonly goneAt: number | undefined } | undefined {
    return this.#labels.get(label);
  }

  /** Labels whose processes run now. */
  running(): string[] {
    return [...this.#labels].filter(([, sighting]) => sighting.goneAt === undefined).map(([label]) => label);
  }

  /** How many scans ran and their mean time, in ms. */
  cost(): { readonly scans: number; readonly meanMs: number } {
    return { scans: this.#scans, meanMs: this.#scans === 0 ? 0 : this.#scanMs / this.#scans };
  }

  forget(label: string): void {
    this.#labels.delete(label);
    this.#departed.delete(label);
  }

  scan(): void {
    const began = performance.now();
    const now = this.#wallClock();
    const listed = new Set<number>();
    const alive = new Map<string, Set<number>>();
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid)) continue;
      listed.add(pid);
      let known = this.#known.get(pid);
      // A process just forked may not have exec'd its command yet: read it again while it is young.
      if (known === undefined || (known.label === null && now - known.seenAt < YOUNG_MS)) {
        known = { label: labelOf(pid), seenAt: known?.seenAt ?? now };
        this.#known.set(pid, known);
      }
      const { label } = known;
      if (label === null) continue;
      if (this.#departed.has(label) && isZombie(pid)) continue;
      let pids = alive.get(label);
      if (pids === undefined) alive.set(label, (pids = new Set()));
      pids.add(pid);
    }
    for (const pid of this.#known.keys()) if (!listed.has(pid)) this.#known.delete(pid);
    for (const [label, pids] of alive) {
      const sighting = this.#labels.get(label);
      if (sighting === undefined) this.#labels.set(label, { lastAliveAt: now, goneAt: undefined, pids });
      else Object.assign(sighting, { lastAliveAt: now, goneAt: undefined, pids });
    }
    for (const [label, sighting] of this.#labels) {
      if (!alive.has(label) && sighting.goneAt === undefined) {
        sighting.goneAt = now;
        sighting.pids = new Set();
      }
    }
    this.#scans += 1;
    this.#scanMs += performance.now() - began;
  }
}

function labelOf(pid: number): string | null {
  for (const file of ['environ', 'cmdline']) {
    try {
      const found = LABEL.exec(readFileSync(`/proc/${String(pid)}/${file}`, 'latin1'));
      if (found !== null) return found[0];
    } catch {
      // Gone already, or a kernel thread.
    }
  }
  return null;
}

function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return true;
  }
}
