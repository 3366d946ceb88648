/** A Tributary instruction from the vendored IDL: the one encoder (infra/solana/instructions.ts), by the name the x402 code uses. */
export { programInstruction as tributaryInstruction } from '../../infra/solana/instructions.js';
