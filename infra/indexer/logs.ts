/**
 * A transaction's log lines read in one pass: the `Program data:` payloads our program
 * logged while it was the innermost running invocation, the fee splits it logged, and
 * whether the runtime cut the logs short.
 *
 * The invocation stack follows only the runtime's own lines, `Program <id> invoke [n]`,
 * `Program <id> success` and `Program <id> failed: ...`, where <id> is a base58 address.
 * What a program prints itself always comes as `Program log: <text>` (msg!) or
 * `Program data: <base64>` (sol_log_data), so a text such as `Program log: failed to
 * pay` or `Program log: Program X invoke [2]` is the program's words and never moves the
 * stack. (The older reader took `Program log: failed...` or `Program log: success` for
 * an exit, and dropped the events our program logged after it.)
 */
import type { FeeSplit } from '../../src/kernel/events/event-types.js';

export interface LoggedPayload { ixPath: string; payload: string }
export interface LoggedSplit { topLevel: number; split: FeeSplit }
export interface ProgramLogs { payloads: LoggedPayload[]; splits: LoggedSplit[]; truncated: boolean }

const PROGRAM = 'Program ';
const INVOKE = ' invoke [';
const SPLIT_PREFIX = 'Program log: Payment executed: ';
/** execute_payment's split (the scheduler part is missing from older program versions) */
const SPLIT = /^Program log: Payment executed: (\d+) -> recipient, (\d+) gateway fee, (?:(\d+) scheduler cut, )?(\d+) protocol fee$/;
const DIGITS = /^\d+$/;
const BASE58_CHAR = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** What a runtime line says of the invocation stack: an invoke at a depth, an exit, or nothing. */
type RuntimeLine = { invoke: string; depth: number } | { exit: true } | undefined;

function runtimeLine(line: string, idEnd: number): RuntimeLine {
  // the shape of the line's end first: most lines (`consumed ... compute units`, `return:`)
  // are neither, and then the id is never cut out and checked
  if (line.startsWith(INVOKE, idEnd)) {
    if (!line.endsWith(']')) return undefined;
    const id = line.slice(PROGRAM.length, idEnd);
    const depth = line.slice(idEnd + INVOKE.length, -1);
    return BASE58_CHAR.test(id) && DIGITS.test(depth) ? { invoke: id, depth: Number(depth) } : undefined;
  }
  const exit = (line.length === idEnd + 8 && line.endsWith(' success')) || line.startsWith(' failed', idEnd);
  return exit && BASE58_CHAR.test(line.slice(PROGRAM.length, idEnd)) ? { exit: true } : undefined;
}

export function readProgramLogs(logs: readonly string[], programId: string): ProgramLogs {
  const stack: string[] = [];
  const payloads: LoggedPayload[] = [];
  const splits: LoggedSplit[] = [];
  let topLevel = -1;
  let truncated = false;
  for (const line of logs) {
    if (!line.startsWith(PROGRAM)) {
      if (line === 'Log truncated') truncated = true;
      continue;
    }
    const idEnd = line.indexOf(' ', PROGRAM.length);
    if (idEnd < 0) continue;
    // `Program data:` and `Program log:` are the program's own output: they never touch the stack
    if (idEnd === PROGRAM.length + 5 && line.startsWith('data:', PROGRAM.length)) {
      if (stack.length > 0 && stack[stack.length - 1] === programId) payloads.push({ ixPath: String(topLevel), payload: line.slice(idEnd + 1) });
      continue;
    }
    if (idEnd === PROGRAM.length + 4 && line.startsWith('log:', PROGRAM.length)) {
      if (!line.startsWith(SPLIT_PREFIX) || stack.length === 0 || stack[stack.length - 1] !== programId) continue;
      const split = SPLIT.exec(line);
      if (split) splits.push({ topLevel, split: { recipient_amount: split[1]!, gateway_residual: split[2]!, scheduler_cut: split[3] ?? '0', protocol_cut: split[4]! } });
      continue;
    }
    const runtime = runtimeLine(line, idEnd);
    if (runtime === undefined) continue;
    if ('exit' in runtime) {
      stack.pop();
      continue;
    }
    if (runtime.depth === 1) {
      topLevel += 1;
      stack.length = 0;
    }
    stack.push(runtime.invoke);
  }
  return { payloads, splits, truncated };
}
