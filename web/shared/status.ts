/** The page's one status line (role=status, aria-live): progress and errors in words. */
import { byId } from './dom.js';

export type Tone = 'info' | 'error' | 'ok';

export interface StatusLine {
  say(message: string, tone?: Tone): void;
  clear(): void;
}

export function statusLine(id = 'status'): StatusLine {
  const node = byId(id);
  const say = (message: string, tone: Tone = 'info'): void => {
    node.textContent = message;
    node.className = tone === 'info' ? 'status' : `status ${tone}`;
  };
  return { say, clear: () => say('') };
}
