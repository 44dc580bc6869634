import { readFileSync } from 'node:fs';

/** /proc's unit of CPU time: 100 a second on every Linux architecture Node runs on. */
const USER_HZ = 100;

export interface ProcCpu {
  /** The process's (or thread's) own user + system seconds. */
  own: number;
  /** User + system seconds of the children it has reaped (waited for), theirs included. */
  reapedChildren: number;
}

/**
 * CPU times from a Linux `stat` file (proc(5)): `/proc/<pid>/stat`, `/proc/<pid>/task/<tid>/stat`
 * or `/proc/self/stat`. Throws where there is no such file.
 */
export function procCpuSeconds(statPath: string): ProcCpu {
  // The fields after the command's closing parenthesis (the name may hold spaces): utime, stime,
  // cutime and cstime are the 12th to 15th of them.
  const fields = readFileSync(statPath, 'utf8').split(') ')[1]!.split(' ');
  return {
    own: (Number(fields[11]) + Number(fields[12])) / USER_HZ,
    reapedChildren: (Number(fields[13]) + Number(fields[14])) / USER_HZ,
  };
}
