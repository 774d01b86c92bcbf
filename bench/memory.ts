import { readdirSync, readFileSync } from "node:fs";

/** A process's resident set now and at its peak (kB → MiB), from /proc/<pid>/status (Linux). */
export function residentMemory(pid: number | "self"): { rssMiB: number; peakMiB: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kB = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
    return { rssMiB: kB("VmRSS") / 1024, peakMiB: kB("VmHWM") / 1024 };
  } catch {
    return null;
  }
}

/** The workerd processes this process started (Miniflare's runtime), by parent pid and name. */
export function childWorkerdPids(parent: number = process.pid): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return pids;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === parent && comm.startsWith("workerd")) pids.push(Number(entry));
    } catch {
      // gone in between
    }
  }
  return pids;
}

/**
 * Samples the resident memory of the stack (every workerd this process
 * started, summed) and of this process every `intervalMs` until `stop()`,
 * which returns the highest samples and the kernel's own peaks (VmHWM).
 */
export function sampleMemory(intervalMs = 100) {
  const pids = childWorkerdPids();
  let stackMax = 0;
  let benchMax = 0;
  const sample = () => {
    stackMax = Math.max(
      stackMax,
      pids.reduce((sum, pid) => sum + (residentMemory(pid)?.rssMiB ?? 0), 0),
    );
    benchMax = Math.max(benchMax, residentMemory("self")?.rssMiB ?? 0);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    pids,
    stop() {
      clearInterval(timer);
      sample();
      return {
        /** The highest sum of the workerd processes' RSS seen while sampling. */
        stackMaxRssMiB: stackMax,
        /** The workerd processes' peak RSS since they started (VmHWM, summed). */
        stackPeakMiB: pids.reduce((sum, pid) => sum + (residentMemory(pid)?.peakMiB ?? 0), 0),
        benchMaxRssMiB: benchMax,
        benchPeakMiB: residentMemory("self")?.peakMiB ?? NaN,
      };
    },
  };
}

/** CPU time (user + system, ms) the processes have used so far, from /proc/<pid>/stat (Linux; clock ticks of 10 ms). */
export function cpuMillis(pids: number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      // After the comm: state(0) ppid(1) … utime(11) stime(12).
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // gone
    }
  }
  return ticks * 10;
}
