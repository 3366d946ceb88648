/** Program administration and gateway management instructions. */
import BN from 'bn.js';
import { bumpOf } from '../keys.js';
import { load, liveConfig, mustBeFree, nonDefault, requireKey } from './accounts.js';
import type { IxContext } from './context.js';
import { frameworkError, programError } from './errors.js';
import { zeros, type PaymentGateway, type ProgramConfig } from './model.js';
import { closeAccount, writeProgramAccount } from './store.js';

/** initialize sets a protocol share of 20 % of every gateway fee */
const DEFAULT_PROTOCOL_SHARE_BPS = 2_000;

export function initialize(ctx: IxContext): void {
  const address = ctx.account('config');
  mustBeFree(ctx, address);
  const admin = ctx.account('admin');
  writeProgramAccount(ctx.view, address, 'ProgramConfig', {
    admin, fee_recipient: admin, protocol_share_bps: DEFAULT_PROTOCOL_SHARE_BPS, _deprecated: 0,
    emergency_pause: false, bump: bumpOf(address), padding: zeros(256),
  });
  ctx.emit('ProgramConfigCreated', { admin, fee_recipient: admin, protocol_share_bps: DEFAULT_PROTOCOL_SHARE_BPS });
}

export function setEmergencyPause(ctx: IxContext): void {
  const config = load(ctx, 'config', 'ProgramConfig');
  requireKey(ctx.account('admin'), config.admin);
  const paused = ctx.args.paused as boolean;
  writeProgramAccount(ctx.view, ctx.account('config'), 'ProgramConfig', { ...config, emergency_pause: paused });
  ctx.emit('EmergencyPauseChanged', { admin: config.admin, was_paused: config.emergency_pause, is_paused: paused });
}

export function changeProgramAuthority(ctx: IxContext): void {
  const config = load(ctx, 'config', 'ProgramConfig');
  requireKey(ctx.account('admin'), config.admin);
  const newAdmin = ctx.account('new_admin');
  writeProgramAccount(ctx.view, ctx.account('config'), 'ProgramConfig', { ...config, admin: newAdmin });
  ctx.emit('ProgramAuthorityChanged', { old_admin: config.admin, new_admin: newAdmin });
}

/** Feature flag bits the program knows: referral, net amount, custom protocol share, permissionless. */
const KNOWN_FLAGS = 0x0f;
/** The bits update_gateway_feature_flags takes from its argument; the others only other instructions set. */
const UPDATABLE_FLAGS = 0x01 | 0x02;

/**
 * The config of an admin-signed gateway instruction: its admin constraint is raw, then
 * the pause (create_payment_gateway.rs, delete_payment_gateway.rs).
 */
function adminConfig(ctx: IxContext): ProgramConfig {
  const config = load(ctx, 'config', 'ProgramConfig');
  if (!config.admin.equals(ctx.account('admin'))) throw frameworkError('ConstraintRaw', 'config');
  if (config.emergency_pause) throw programError('ProgramPaused');
  return config;
}

/** protocol (custom when flag 0x04) + scheduler + referral shares within 100 % (validate_share_constraint). */
function checkShares(gateway: PaymentGateway, config: ProgramConfig): void {
  const protocol = (gateway.feature_flags & 0x04) !== 0 ? gateway.custom_protocol_share_bps : config.protocol_share_bps;
  if (protocol + gateway.scheduler_share_bps + gateway.referral_allocation_bps > 10_000) throw programError('CombinedFeeBpsExceedsMax');
}

export function createPaymentGateway(ctx: IxContext): void {
  const address = ctx.account('gateway');
  mustBeFree(ctx, address);
  const config = adminConfig(ctx);
  const feeRecipient = nonDefault(ctx.account('fee_recipient'));
  const feeBps = ctx.args.gateway_fee_bps as number;
  if (feeBps > 10_000) throw programError('InvalidFeeBps');
  const flags = ctx.args.initial_feature_flags as number;
  if (flags > KNOWN_FLAGS) throw programError('InvalidFeatureFlags');
  const authority = ctx.account('authority');
  const name = ctx.args.name as number[];
  const url = ctx.args.url as number[];
  // the signer starts as the authority; referral settings and the custom share start at 0
  const gateway: PaymentGateway = {
    authority, fee_recipient: feeRecipient, gateway_fee_bps: feeBps, is_active: true, padding1: new BN(0),
    created_at: new BN(ctx.clock.now), bump: bumpOf(address), name, url, signer: authority,
    feature_flags: flags, referral_allocation_bps: 0, referral_tiers_bps: [0, 0, 0], custom_protocol_share_bps: 0,
    scheduler_share_bps: ctx.args.scheduler_share_bps as number, padding: zeros(115),
  };
  checkShares(gateway, config);
  writeProgramAccount(ctx.view, address, 'PaymentGateway', gateway);
  ctx.emit('PaymentGatewayCreated', { authority, fee_recipient: feeRecipient, gateway_fee_bps: feeBps, name, url });
}

export function deletePaymentGateway(ctx: IxContext): void {
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  adminConfig(ctx);
  closeAccount(ctx.view, ctx.account('gateway'), ctx.account('admin'));
  ctx.emit('PaymentGatewayDeleted', { gateway: ctx.account('gateway'), authority: gateway.authority, name: gateway.name });
}

/** The gateway of an authority-signed instruction (its PDA already ties it to the authority). */
function ownGateway(ctx: IxContext): PaymentGateway {
  const gateway = load(ctx, 'gateway', 'PaymentGateway');
  requireKey(ctx.account('authority'), gateway.authority);
  return gateway;
}

function saveGateway(ctx: IxContext, gateway: PaymentGateway): void {
  writeProgramAccount(ctx.view, ctx.account('gateway'), 'PaymentGateway', gateway);
}

export function changeGatewayFeeBps(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const config = liveConfig(ctx);
  const next = ctx.args.new_fee_bps as number;
  if (next > 10_000) throw programError('InvalidFeeBps');
  checkShares(gateway, config);
  saveGateway(ctx, { ...gateway, gateway_fee_bps: next });
  ctx.emit('GatewayFeeBpsChanged', { gateway: ctx.account('gateway'), old_fee_bps: gateway.gateway_fee_bps, new_fee_bps: next });
}

export function changeGatewayFeeRecipient(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const next = nonDefault(ctx.account('new_fee_recipient'));
  liveConfig(ctx);
  saveGateway(ctx, { ...gateway, fee_recipient: next });
  ctx.emit('GatewayFeeRecipientChanged', {
    gateway: ctx.account('gateway'), old_fee_recipient: gateway.fee_recipient, new_fee_recipient: next,
  });
}

export function changeGatewaySigner(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const next = nonDefault(ctx.account('new_signer'));
  liveConfig(ctx);
  saveGateway(ctx, { ...gateway, signer: next });
  ctx.emit('GatewaySignerChanged', { gateway: ctx.account('gateway'), old_signer: gateway.signer, new_signer: next });
}

interface ReferralSettings { feature_flags: number | null; referral_allocation_bps: number | null; referral_tiers_bps: number[] | null }

/**
 * Flags as update_gateway_feature_flags writes them; the tiers must sum to 100 % whether
 * or not this call sets them or any allocation (update_gateway_referral_settings.rs).
 */
export function updateGatewayReferralSettings(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const args = ctx.args.args as ReferralSettings;
  const allocation = args.referral_allocation_bps ?? gateway.referral_allocation_bps;
  const tiers = args.referral_tiers_bps ?? gateway.referral_tiers_bps;
  if (allocation > 2_500) throw programError('InvalidReferralAllocation');
  if (tiers.reduce((a, b) => a + b, 0) !== 10_000) throw programError('InvalidReferralTiers');
  const flags = args.feature_flags === null ? gateway.feature_flags : maskedFlags(gateway.feature_flags, args.feature_flags);
  const next = { ...gateway, feature_flags: flags, referral_allocation_bps: allocation, referral_tiers_bps: tiers };
  checkShares(next, load(ctx, 'config', 'ProgramConfig'));
  saveGateway(ctx, next);
}

/** Referral and net amount from `requested`; custom protocol share and permissionless kept from `stored`. */
function maskedFlags(stored: number, requested: number): number {
  return (requested & UPDATABLE_FLAGS) | (stored & ~UPDATABLE_FLAGS & KNOWN_FLAGS);
}

/**
 * Takes referral and net-amount from the argument; the custom-protocol-share bit (its own
 * instruction sets it) and the permissionless bit (frozen at creation) are kept.
 */
export function updateGatewayFeatureFlags(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const flags = (ctx.args.args as { feature_flags: number }).feature_flags;
  if (flags > KNOWN_FLAGS) throw programError('InvalidFeatureFlags');
  saveGateway(ctx, { ...gateway, feature_flags: maskedFlags(gateway.feature_flags, flags) });
}

export function updateGatewaySchedulerShare(ctx: IxContext): void {
  const gateway = ownGateway(ctx);
  const bps = ctx.args.scheduler_share_bps as number;
  if (bps > 10_000) throw programError('InvalidFeeBps');
  const next = { ...gateway, scheduler_share_bps: bps };
  checkShares(next, load(ctx, 'config', 'ProgramConfig'));
  saveGateway(ctx, next);
}

/** The admin sets or clears flag bit2 and the gateway's custom protocol share (no event). */
export function updateGatewayProtocolFee(ctx: IxContext): void {
  const config = load(ctx, 'config', 'ProgramConfig');
  requireKey(ctx.account('admin'), config.admin);
  const gateway = ownGateway(ctx);
  const args = ctx.args.args as { use_custom_protocol_fee: boolean; custom_protocol_share_bps: number };
  if (args.custom_protocol_share_bps > 10_000) throw programError('InvalidFeeBps');
  const share = args.use_custom_protocol_fee ? args.custom_protocol_share_bps : config.protocol_share_bps;
  if (share + gateway.scheduler_share_bps + gateway.referral_allocation_bps > 10_000) throw programError('CombinedFeeBpsExceedsMax');
  const flags = args.use_custom_protocol_fee ? gateway.feature_flags | 0x04 : gateway.feature_flags & ~0x04;
  saveGateway(ctx, { ...gateway, feature_flags: flags, custom_protocol_share_bps: args.custom_protocol_share_bps });
}
