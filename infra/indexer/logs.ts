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
import { isBase58 } from '../../src/kernel/events/base58.js';
import type { FeeSplit } from '../../src/kernel/events/event-types.js';

export interface LoggedPayload { ixPath: string; payload: string }
export interface LoggedSplit { topLevel: number; split: FeeSplit }
export interface ProgramLogs { payloads: LoggedPayload[]; splits: LoggedSplit[]; truncated: boolean }

const PROGRAM = 'Program ';
const INVOKE = ' invoke [';
const SUCCESS = ' success';
const FAILED = ' failed';
const SPLIT_PREFIX = 'Program log: Payment executed: ';
/** execute_payment's split (the scheduler part is missing from older program versions) */
const SPLIT = /^Program log: Payment executed: (\d+) -> recipient, (\d+) gateway fee, (?:(\d+) scheduler cut, )?(\d+) protocol fee$/;
const ZERO = 0x30;
const NINE = 0x39;
const RIGHT_BRACKET = 0x5d;

/**
 * line.startsWith(prefix, at), by character codes: the indexer asks it of every log line
 * of every transaction, several times, and a call of the builtin cost several times this loop.
 */
function startsAt(line: string, prefix: string, at: number): boolean {
  if (line.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i += 1) if (line.charCodeAt(at + i) !== prefix.charCodeAt(i)) return false;
  return true;
}

/** Whether line[from, to) is a base58 address: 32 to 44 characters of the alphabet. */
function isAddressAt(line: string, from: number, to: number): boolean {
  return to - from >= 32 && to - from <= 44 && isBase58(line, from, to);
}

/** runtimeLine's answers besides an invoke's depth (0 or more) */
const NONE = -1;
const EXIT = -2;

/**
 * What a runtime line whose id ends at `idEnd` says of the stack: NONE, EXIT, or the depth
 * of an invoke (a number: a depth written `01` is 1). Read by character codes in
 * place: the indexer reads every log line of every transaction, and cutting out the id
 * and depth to match them with regexes was most of this function's cost.
 */
function runtimeLine(line: string, idEnd: number): number {
  // the shape of the line's end first: most lines (`consumed ... compute units`, `return:`)
  // are neither, and then the id is never checked
  if (startsAt(line, INVOKE, idEnd)) {
    const last = line.length - 1;
    const from = idEnd + INVOKE.length;
    if (line.charCodeAt(last) !== RIGHT_BRACKET || last === from) return NONE;
    let depth = 0;
    for (let i = from; i < last; i += 1) {
      const c = line.charCodeAt(i);
      if (c < ZERO || c > NINE) return NONE;
      depth = depth * 10 + (c - ZERO);
    }
    return isAddressAt(line, PROGRAM.length, idEnd) ? depth : NONE;
  }
  const exit = (line.length === idEnd + SUCCESS.length && startsAt(line, SUCCESS, idEnd)) || startsAt(line, FAILED, idEnd);
  return exit && isAddressAt(line, PROGRAM.length, idEnd) ? EXIT : NONE;
}

export function readProgramLogs(logs: readonly string[], programId: string): ProgramLogs {
  // the stack holds whether each running invocation is our program: nothing else is asked of it
  const stack: boolean[] = [];
  const payloads: LoggedPayload[] = [];
  const splits: LoggedSplit[] = [];
  let topLevel = -1;
  let ixPath = '-1';
  let truncated = false;
  const idLength = programId.length;
  for (const line of logs) {
    if (!startsAt(line, PROGRAM, 0)) {
      if (line === 'Log truncated') truncated = true;
      continue;
    }
    const idEnd = line.indexOf(' ', PROGRAM.length);
    if (idEnd < 0) continue;
    // `Program data:` and `Program log:` are the program's own output: they never touch the stack
    if (idEnd === PROGRAM.length + 5 && startsAt(line, 'data:', PROGRAM.length)) {
      if (stack.length > 0 && stack[stack.length - 1] === true) payloads.push({ ixPath, payload: line.slice(idEnd + 1) });
      continue;
    }
    if (idEnd === PROGRAM.length + 4 && startsAt(line, 'log:', PROGRAM.length)) {
      if (!startsAt(line, SPLIT_PREFIX, 0) || stack.length === 0 || stack[stack.length - 1] !== true) continue;
      const split = SPLIT.exec(line);
      if (split) splits.push({ topLevel, split: { recipient_amount: split[1]!, gateway_residual: split[2]!, scheduler_cut: split[3] ?? '0', protocol_cut: split[4]! } });
      continue;
    }
    const runtime = runtimeLine(line, idEnd);
    if (runtime === NONE) continue;
    if (runtime === EXIT) {
      stack.pop();
      continue;
    }
    if (runtime === 1) {
      topLevel += 1;
      ixPath = String(topLevel);
      stack.length = 0;
    }
    stack.push(idEnd - PROGRAM.length === idLength && startsAt(line, programId, PROGRAM.length));
  }
  return { payloads, splits, truncated };
}
