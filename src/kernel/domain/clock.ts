/** Time as the service reads it: injected, so tests can move it. */
export interface Clock { now(): number }
export const systemClock: Clock = { now: () => Date.now() };
