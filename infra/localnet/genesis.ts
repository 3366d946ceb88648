/**
 * The cluster's starting state, the same for a seed: funded wallets with token accounts
 * of every well-known mint, the mints themselves, the program account, and then, as
 * real transactions with their events, the program's initialization and the fixture
 * gateways (so that clients can create policies even with the workload off). A localnet
 * answering as devnet also has devnet's Token-2022 stablecoins, funded alike.
 */
import { Keypair, PublicKey } from '@solana/web3.js';
import type { Chain } from './chain.js';
import {
  BPF_UPGRADEABLE_LOADER_ID, DEVNET_TOKEN_2022_MINTS, PROGRAM_ID, SYSTEM_PROGRAM_ID, TOKEN_PROGRAM_ID, WELL_KNOWN_MINTS,
  type LocalnetCluster, type WellKnownMint,
} from './constants.js';
import { tributaryIx } from './instructions.js';
import { deriveKeypair, pdas } from './keys.js';
import { fixedText } from './program/model.js';
import { encodeMint, encodeTokenAccount, MINT_SIZE, tokenAccountSize } from './spl.js';
import { rentExempt } from './program/encoding.js';
import { submitTransaction } from './submit.js';
import { signedTransaction } from './transactions.js';

export interface GatewayActor {
  authority: Keypair; feeRecipient: Keypair; address: PublicKey; name: string; feeBps: number;
  /** who executes payments: for the fixture gateways a key distinct from the authority, set in genesis */
  signer: Keypair;
}

export interface Actors {
  admin: Keypair;
  /** the fixture gateways: the service (its scheduler) executes their payments, not the workload */
  gateways: GatewayActor[];
  /** gateways of the workload's own, which executes their payments itself so the event flow continues */
  workloadGateways: GatewayActor[];
  /** the workload's policy owners */
  users: Keypair[];
  /** funded wallets that own nothing, for tests and users to act as */
  spare: Keypair[];
  /** a wallet with SOL and no token accounts at all: payments from it fail with InsufficientBalance */
  unfunded: Keypair;
  referrers: Keypair[];
  /** the recipients of the workload's policies */
  merchants: Keypair[];
}

const GATEWAYS = [
  { name: 'Acme Streaming', feeBps: 100 },
  { name: 'Borealis Data', feeBps: 200 },
  { name: 'Cobalt API', feeBps: 250 },
];
const WORKLOAD_GATEWAYS = [{ name: 'Delta Workload', feeBps: 150 }];
export const USER_COUNT = 6;
const SOL = 1_000_000_000;
/** whole tokens of every well-known mint in each funded wallet */
export const FIXTURE_TOKENS = 1_000_000n;
/** the workload's users pay for thousands of charges a minute: they get far more */
const WORKLOAD_USER_TOKENS = 1_000_000_000n;

export function deriveActors(seed: string): Actors {
  return {
    admin: deriveKeypair(seed, 'admin'),
    gateways: GATEWAYS.map((g, i) => {
      const authority = deriveKeypair(seed, `gateway-authority-${i}`);
      return {
        ...g, authority, feeRecipient: deriveKeypair(seed, `gateway-fee-${i}`), address: pdas.gateway(authority.publicKey),
        signer: deriveKeypair(seed, `fixture-gateway-signer-${i}`),
      };
    }),
    workloadGateways: WORKLOAD_GATEWAYS.map((g, i) => {
      const authority = deriveKeypair(seed, `workload-gateway-authority-${i}`);
      return {
        ...g, authority, signer: authority, feeRecipient: deriveKeypair(seed, `workload-gateway-fee-${i}`), address: pdas.gateway(authority.publicKey),
      };
    }),
    users: Array.from({ length: USER_COUNT }, (_, i) => deriveKeypair(seed, `user-${i}`)),
    spare: [0, 1].map((i) => deriveKeypair(seed, `wallet-spare-${i}`)),
    unfunded: deriveKeypair(seed, 'wallet-unfunded'),
    referrers: [0, 1, 2].map((i) => deriveKeypair(seed, `referrer-${i}`)),
    merchants: [0, 1, 2, 3].map((i) => deriveKeypair(seed, `merchant-${i}`)),
  };
}

const tokenProgramOf = (m: WellKnownMint): string => m.tokenProgram ?? TOKEN_PROGRAM_ID.toBase58();

/** The mints created at genesis for a cluster: the well-known ones, and on devnet its Token-2022 stablecoins too. */
export const genesisMints = (cluster: LocalnetCluster = 'localnet'): readonly WellKnownMint[] =>
  (cluster === 'devnet' ? [...WELL_KNOWN_MINTS, ...DEVNET_TOKEN_2022_MINTS] : WELL_KNOWN_MINTS);

/** The well-known mints this chain has (those its genesis created). */
export const chainMints = (chain: Chain): WellKnownMint[] =>
  genesisMints('devnet').filter((m) => chain.store.get(m.address)?.owner === tokenProgramOf(m));

/** The associated token account of `owner` for a well-known mint, under the mint's token program. */
export const mintAta = (owner: PublicKey, m: WellKnownMint): PublicKey =>
  pdas.associatedToken(owner, new PublicKey(m.address), new PublicKey(tokenProgramOf(m)));

/** SOL, and `tokens` whole tokens of every well-known mint of the chain in associated token accounts (none when 0). */
export function fundWallet(chain: Chain, owner: PublicKey, tokens: bigint = FIXTURE_TOKENS): void {
  chain.store.set(owner.toBase58(), { lamports: 1_000 * SOL, owner: SYSTEM_PROGRAM_ID.toBase58(), executable: false, data: Buffer.alloc(0) });
  if (tokens === 0n) return;
  for (const m of chainMints(chain)) {
    const program = tokenProgramOf(m);
    chain.store.set(mintAta(owner, m).toBase58(), {
      lamports: rentExempt(tokenAccountSize(program)), owner: program, executable: false,
      data: encodeTokenAccount({ mint: new PublicKey(m.address), owner, amount: tokens * 10n ** BigInt(m.decimals) }, program),
    });
  }
}

export function createGenesisAccounts(chain: Chain, actors: Actors, cluster: LocalnetCluster = 'localnet'): void {
  const mintAuthority = deriveKeypair(chain.seed, 'mint-authority').publicKey;
  for (const m of genesisMints(cluster)) {
    chain.store.set(m.address, {
      lamports: rentExempt(MINT_SIZE), owner: tokenProgramOf(m), executable: false,
      data: encodeMint({ authority: mintAuthority, supply: 10n ** 15n, decimals: m.decimals }),
    });
  }
  chain.store.set(PROGRAM_ID.toBase58(), { lamports: 1_141_440, owner: BPF_UPGRADEABLE_LOADER_ID.toBase58(), executable: true, data: Buffer.alloc(36) });
  const wallets = [
    actors.admin, ...actors.spare, ...actors.referrers, ...actors.merchants,
    ...[...actors.gateways, ...actors.workloadGateways].flatMap((g) => [g.authority, g.feeRecipient, g.signer]),
  ];
  for (const w of wallets) fundWallet(chain, w.publicKey);
  for (const u of actors.users) fundWallet(chain, u.publicKey, WORKLOAD_USER_TOKENS);
  fundWallet(chain, actors.unfunded.publicKey, 0n);
}

/** initialize + the fixture gateways, the first referral-enabled; throws if any fails (a bug). */
export function runGenesisTransactions(chain: Chain, actors: Actors): void {
  const admin = actors.admin;
  const land = (signers: Keypair[], ixs: ReturnType<typeof tributaryIx>[]): void => {
    const tx = signedTransaction(admin, signers, ixs, chain.latestBlockhash().blockhash);
    const out = submitTransaction(chain, tx, { verifySignatures: false, commit: true });
    if (out.kind !== 'executed' || out.result.err !== null) {
      throw new Error(`genesis transaction failed: ${JSON.stringify(out.kind === 'executed' ? out.result.logs : out.reason)}`);
    }
  };
  land([], [tributaryIx('initialize', {
    authority: admin.publicKey, admin: admin.publicKey, config: pdas.config(),
    program_data: deriveKeypair(chain.seed, 'program-data').publicKey,
  })]);
  for (const g of [...actors.gateways, ...actors.workloadGateways]) {
    land([], [tributaryIx('create_payment_gateway', {
      admin: admin.publicKey, authority: g.authority.publicKey, gateway: g.address, config: pdas.config(),
      fee_recipient: g.feeRecipient.publicKey,
    }, {
      gateway_fee_bps: g.feeBps, scheduler_share_bps: 0, name: fixedText(g.name, 32),
      url: fixedText(`https://${g.name.toLowerCase().replace(/ /g, '-')}.localnet.test`, 64), initial_feature_flags: 0,
    })]);
  }
  const first = actors.gateways[0];
  if (first) {
    land([first.authority], [tributaryIx('update_gateway_referral_settings', {
      gateway: first.address, authority: first.authority.publicKey, config: pdas.config(),
    }, { args: { feature_flags: null, referral_allocation_bps: 1_000, referral_tiers_bps: [6_000, 3_000, 1_000] } })]);
  }
  // the fixture gateways execute through a signer of their own, as a merchant delegating to a scheduler does
  for (const g of actors.gateways) {
    land([g.authority], [tributaryIx('change_gateway_signer', {
      authority: g.authority.publicKey, gateway: g.address, new_signer: g.signer.publicKey, config: pdas.config(),
    })]);
  }
  // the workload's own gateway pays referrals (flag 0x01), so their events keep flowing
  for (const g of actors.workloadGateways) {
    land([g.authority], [tributaryIx('update_gateway_referral_settings', {
      gateway: g.address, authority: g.authority.publicKey, config: pdas.config(),
    }, { args: { feature_flags: 1, referral_allocation_bps: 1_000, referral_tiers_bps: [6_000, 3_000, 1_000] } })]);
  }
}
