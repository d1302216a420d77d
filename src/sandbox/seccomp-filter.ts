/**
 * The seccomp filter every sandboxed command runs under, as a classic BPF program in the
 * binary form `bwrap --seccomp FD` reads (an array of `struct sock_filter`, host byte order).
 *
 * It is a deny list on top of what bubblewrap already takes away (capabilities, other
 * namespaces): the calls that exist only to administer a machine or that open large kernel
 * attack surface, which no build, test or script needs. Each answers EPERM, so a program
 * sees an ordinary "operation not permitted" instead of dying. io_uring and clone3 answer
 * ENOSYS instead, which is what makes libuv and glibc fall back to the plain calls (clone3
 * keeps its flags in memory a filter cannot read, so plain clone, whose flags it can read,
 * must be used). A call made through another ABI than the native one (32-bit x86 code on
 * x86_64, x32) kills the process: its numbers mean different calls and would slip past.
 */

interface Architecture {
  /** AUDIT_ARCH_* as seccomp_data.arch reports it. */
  readonly auditArch: number;
  /** Calls answered EPERM. */
  readonly denied: Readonly<Record<DeniedCall, number>>;
  readonly clone: number;
  readonly clone3: number;
  readonly ioUring: readonly number[];
  /** Syscall numbers at or above this are another ABI (x32 on x86_64). */
  readonly foreignAbiFrom: number | undefined;
}

/** The calls that answer EPERM inside the sandbox. */
export const DENIED_CALLS = [
  'ptrace',
  'process_vm_readv',
  'process_vm_writev',
  'mount',
  'umount2',
  'pivot_root',
  'chroot',
  'open_tree',
  'move_mount',
  'fsopen',
  'fsconfig',
  'fsmount',
  'fspick',
  'mount_setattr',
  'unshare',
  'setns',
  'keyctl',
  'add_key',
  'request_key',
  'bpf',
  'perf_event_open',
  'userfaultfd',
  'kexec_load',
  'kexec_file_load',
  'init_module',
  'finit_module',
  'delete_module',
  'swapon',
  'swapoff',
  'reboot',
  'acct',
  'quotactl',
  'settimeofday',
  'sethostname',
  'setdomainname',
  'syslog',
  'vhangup',
  'name_to_handle_at',
  'open_by_handle_at',
  'lookup_dcookie',
] as const;

export type DeniedCall = (typeof DENIED_CALLS)[number];

/** x86_64 numbers (arch/x86/entry/syscalls/syscall_64.tbl). */
const X86_64: Architecture = {
  auditArch: 0xc000003e,
  denied: {
    ptrace: 101,
    process_vm_readv: 310,
    process_vm_writev: 311,
    mount: 165,
    umount2: 166,
    pivot_root: 155,
    chroot: 161,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 272,
    setns: 308,
    keyctl: 250,
    add_key: 248,
    request_key: 249,
    bpf: 321,
    perf_event_open: 298,
    userfaultfd: 323,
    kexec_load: 246,
    kexec_file_load: 320,
    init_module: 175,
    finit_module: 313,
    delete_module: 176,
    swapon: 167,
    swapoff: 168,
    reboot: 169,
    acct: 163,
    quotactl: 179,
    settimeofday: 164,
    sethostname: 170,
    setdomainname: 171,
    syslog: 103,
    vhangup: 153,
    name_to_handle_at: 303,
    open_by_handle_at: 304,
    lookup_dcookie: 212,
  },
  clone: 56,
  clone3: 435,
  ioUring: [425, 426, 427],
  foreignAbiFrom: 0x40000000,
};

/** aarch64 numbers (the generic table, include/uapi/asm-generic/unistd.h). */
const AARCH64: Architecture = {
  auditArch: 0xc00000b7,
  denied: {
    ptrace: 117,
    process_vm_readv: 270,
    process_vm_writev: 271,
    mount: 40,
    umount2: 39,
    pivot_root: 41,
    chroot: 51,
    open_tree: 428,
    move_mount: 429,
    fsopen: 430,
    fsconfig: 431,
    fsmount: 432,
    fspick: 433,
    mount_setattr: 442,
    unshare: 97,
    setns: 268,
    keyctl: 219,
    add_key: 217,
    request_key: 218,
    bpf: 280,
    perf_event_open: 241,
    userfaultfd: 282,
    kexec_load: 104,
    kexec_file_load: 294,
    init_module: 105,
    finit_module: 273,
    delete_module: 106,
    swapon: 224,
    swapoff: 225,
    reboot: 142,
    acct: 89,
    quotactl: 60,
    settimeofday: 170,
    sethostname: 161,
    setdomainname: 162,
    syslog: 116,
    vhangup: 58,
    name_to_handle_at: 264,
    open_by_handle_at: 265,
    lookup_dcookie: 18,
  },
  clone: 220,
  clone3: 435,
  ioUring: [425, 426, 427],
  foreignAbiFrom: undefined,
};

const CLONE_NEWUSER = 0x10000000;
const EPERM = 1;
const ENOSYS = 38;

const SECCOMP_RET_KILL_PROCESS = 0x80000000;
const SECCOMP_RET_ERRNO = 0x00050000;
const SECCOMP_RET_ALLOW = 0x7fff0000;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const JMP_JEQ_K = 0x15;
const JMP_JGE_K = 0x35;
const JMP_JSET_K = 0x45;
const RET_K = 0x06;

/** Offsets in struct seccomp_data: nr, arch, then instruction_pointer, then args[6] (64-bit each). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
const OFFSET_ARG0_LOW = 16;

interface Instruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

const statement = (code: number, k: number): Instruction => ({ code, jt: 0, jf: 0, k });
const jump = (code: number, k: number, jt: number, jf: number): Instruction => ({ code, jt, jf, k });

/** The architectures the filter knows, by Node's `process.arch` name. */
export const SECCOMP_ARCHITECTURES = { x64: X86_64, arm64: AARCH64 } as const;

/** Whether this machine's architecture has a filter. */
export function seccompSupported(arch: string): arch is keyof typeof SECCOMP_ARCHITECTURES {
  return Object.hasOwn(SECCOMP_ARCHITECTURES, arch);
}

/**
 * The program for one architecture. Its shape: check the ABI (else kill), load the call
 * number, refuse a foreign-ABI number, answer each denied number with EPERM and io_uring
 * and clone3 with ENOSYS, refuse clone with CLONE_NEWUSER, allow the rest.
 */
export function buildSeccompFilter(options: { arch: keyof typeof SECCOMP_ARCHITECTURES }): Buffer {
  const table = SECCOMP_ARCHITECTURES[options.arch];
  const deniedNumbers = DENIED_CALLS.map((name) => table.denied[name]);
  const program: Instruction[] = [];
  const kill = statement(RET_K, SECCOMP_RET_KILL_PROCESS);
  const eperm = statement(RET_K, SECCOMP_RET_ERRNO | EPERM);
  const enosys = statement(RET_K, SECCOMP_RET_ERRNO | ENOSYS);
  const allow = statement(RET_K, SECCOMP_RET_ALLOW);

  program.push(statement(LD_W_ABS, OFFSET_ARCH), jump(JMP_JEQ_K, table.auditArch, 1, 0), kill);
  program.push(statement(LD_W_ABS, OFFSET_NR));
  if (table.foreignAbiFrom !== undefined) program.push(jump(JMP_JGE_K, table.foreignAbiFrom, 0, 1), kill);
  // Each check jumps over the rest of the list to its answer; the answers follow the list.
  const enosysNumbers = [...table.ioUring, table.clone3];
  const checks = deniedNumbers.length + enosysNumbers.length + 1;
  deniedNumbers.forEach((number, index) => {
    program.push(jump(JMP_JEQ_K, number, checks - index, 0));
  });
  enosysNumbers.forEach((number, index) => {
    program.push(jump(JMP_JEQ_K, number, checks - deniedNumbers.length - index + 1, 0));
  });
  // clone: jump to the flag check after the three answers.
  program.push(jump(JMP_JEQ_K, table.clone, 3, 0));
  program.push(allow, eperm, enosys);
  program.push(statement(LD_W_ABS, OFFSET_ARG0_LOW), jump(JMP_JSET_K, CLONE_NEWUSER, 0, 1), eperm, allow);
  return encode(program);
}

function encode(program: readonly Instruction[]): Buffer {
  const buffer = Buffer.alloc(program.length * 8);
  program.forEach((instruction, index) => {
    const at = index * 8;
    buffer.writeUInt16LE(instruction.code, at);
    buffer.writeUInt8(instruction.jt, at + 2);
    buffer.writeUInt8(instruction.jf, at + 3);
    buffer.writeUInt32LE(instruction.k >>> 0, at + 4);
  });
  return buffer;
}
