/** The file the probe creates in its home, whose host owner shows who commands really are. */
export const PROBE_OWNER_FILE = 'probe-owner';

/** Host files a sandboxed command must never be able to open for writing. */
const MUST_NOT_WRITE = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe', '/proc/sys/vm/drop_caches', '/proc/sysrq-trigger', '/sys/kernel/uevent_helper'];

/**
 * The start-up probe, run like any command. It opens each file of MUST_NOT_WRITE for
 * appending without writing a byte (so even a broken sandbox changes nothing), tries to
 * make a user namespace (refused by seccomp and `--disable-userns`), and leaves a file in
 * the home. Each finding is one line `probe: <what>`; "probe: ok" ends a clean run.
 */
export function probeCommand(options: { seccomp: boolean }): string {
  const lines = [
    `: > ${PROBE_OWNER_FILE} || { echo "probe: cannot write the home"; exit 0; }`,
    `for f in ${MUST_NOT_WRITE.join(' ')}; do if [ -e "$f" ] && ( : >> "$f" ) 2>/dev/null; then echo "probe: writable $f"; fi; done`,
    `if [ "$(id -u)" = 0 ]; then echo "probe: uid 0 inside"; fi`,
  ];
  if (options.seccomp) lines.push(`if command -v unshare >/dev/null && unshare -U true 2>/dev/null; then echo "probe: user namespace allowed"; fi`);
  lines.push('echo "probe: ok"');
  return lines.join('\n');
}

/** Undefined when the probe found nothing wrong; otherwise the reason run_command is disabled. */
export function readProbeVerdict(options: { output: string; ownerUid: number | undefined; expectedUid: number }): string | undefined {
  const findings = options.output
    .split('\n')
    .filter((line) => line.startsWith('probe: ') && line !== 'probe: ok')
    .map((line) => line.slice('probe: '.length));
  if (findings.length > 0) return `the sandbox probe found the sandbox unsafe: ${findings.join('; ')}`;
  if (!options.output.includes('probe: ok')) return `the sandbox probe did not finish: ${options.output.trim().slice(0, 300)}`;
  if (options.ownerUid === undefined) return 'the sandbox probe left no file in its home';
  if (options.ownerUid === 0) return 'commands run as host uid 0 (root): a sandboxed command could write host sysctls';
  if (options.ownerUid !== options.expectedUid) {
    return `commands run as host uid ${String(options.ownerUid)}, not the expected unprivileged uid ${String(options.expectedUid)}`;
  }
  return undefined;
}
