/** One fault the soak injects mid-load: a name for its error-rate window, and how to cause it. */
export interface Fault { name: string; run(): Promise<void> }
