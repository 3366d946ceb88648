/** The shape every workload action produces: a transaction to land and what to remember after. */
import type { Keypair, TransactionInstruction } from '@solana/web3.js';
import type { Chain } from './chain.js';
import type { Actors } from './genesis.js';
import type { Prng } from './prng.js';
import type { WorkloadModel } from './workload-model.js';

export interface Plan {
  label: string;
  payer: Keypair;
  signers: Keypair[];
  ixs: TransactionInstruction[];
  /** runs after the transaction landed successfully */
  after?: () => void;
}

export interface WorkloadEnv {
  chain: Chain;
  model: WorkloadModel;
  prng: Prng;
  actors: Actors;
  /** recipients of policies (merchants) */
  merchants: Keypair[];
}

export type Action = (env: WorkloadEnv) => Plan | undefined;
