/**
 * One invocation of the emulated Tributary program: decode the instruction with Anchor's
 * instruction coder, run Anchor's account constraints from the IDL, then the handler.
 * Returns the program's own log lines and events; the caller frames them with the
 * runtime's invoke/success lines and decides how each event is emitted.
 */
import type { AccountMeta } from '@solana/web3.js';
import { coder, encodeEvent } from './encoding.js';
import { checkConstraints, createContext, idlInstructions, type EmittedEvent, type IxContext, type ProgramClock } from './context.js';
import { frameworkError, ProgramError } from './errors.js';
import * as admin from './handlers-admin.js';
import * as composable from './handlers-composable.js';
import * as payments from './handlers-payments.js';
import * as user from './handlers-user.js';
import type { Overlay } from './store.js';

const HANDLERS: Readonly<Record<string, (ctx: IxContext) => void>> = {
  initialize: admin.initialize,
  set_emergency_pause: admin.setEmergencyPause,
  change_program_authority: admin.changeProgramAuthority,
  create_payment_gateway: admin.createPaymentGateway,
  delete_payment_gateway: admin.deletePaymentGateway,
  change_gateway_fee_bps: admin.changeGatewayFeeBps,
  change_gateway_fee_recipient: admin.changeGatewayFeeRecipient,
  change_gateway_signer: admin.changeGatewaySigner,
  update_gateway_referral_settings: admin.updateGatewayReferralSettings,
  update_gateway_feature_flags: admin.updateGatewayFeatureFlags,
  update_gateway_scheduler_share: admin.updateGatewaySchedulerShare,
  update_gateway_protocol_fee: admin.updateGatewayProtocolFee,
  create_user_payment: user.createUserPayment,
  delete_user_payment: user.deleteUserPayment,
  create_payment_policy: user.createPaymentPolicy,
  change_payment_policy_status: user.changePaymentPolicyStatus,
  delete_payment_policy: user.deletePaymentPolicy,
  execute_payment: payments.executePayment,
  create_composable_policy: composable.createComposablePolicy,
  change_composable_status: composable.changeComposableStatus,
  delete_composable_policy: composable.deleteComposablePolicy,
  execute_composable: composable.executeComposable,
};

export interface ProgramEvent { name: string; payload: Buffer; observed?: Record<string, unknown> }

export interface ProgramOutcome {
  /** `Program log:` lines, in order */
  logs: string[];
  events: ProgramEvent[];
  error?: ProgramError;
  instruction?: string;
}

const pascal = (snake: string): string => snake.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

export function invokeTributary(view: Overlay, clock: ProgramClock, keys: AccountMeta[], data: Buffer): ProgramOutcome {
  const sink: { events: EmittedEvent[]; logs: string[] } = { events: [], logs: [] };
  let name: string | undefined;
  try {
    const decoded = decodeInstruction(data);
    name = decoded.name;
    sink.logs.push(`Program log: Instruction: ${pascal(decoded.name)}`);
    const ix = idlInstructions.find((i) => i.name === decoded.name);
    const handler = HANDLERS[decoded.name];
    if (!ix || !handler) {
      sink.logs.push('Program log: this instruction is not emulated by the localnet');
      throw frameworkError('InstructionFallbackNotFound');
    }
    const ctx = createContext(ix, decoded.data, keys, view, clock, sink);
    checkConstraints(ix, ctx, keys);
    handler(ctx);
    const events = sink.events.map((e) => ({ name: e.name, payload: encodeEvent(e.name, e.data), ...(e.observed ? { observed: e.observed } : {}) }));
    return { logs: sink.logs, events, instruction: name };
  } catch (err) {
    const error = err instanceof ProgramError ? err : frameworkError('InstructionDidNotDeserialize');
    if (!(err instanceof ProgramError)) sink.logs.push(`Program log: ${(err as Error).message}`);
    sink.logs.push(`Program log: ${error.logLine()}`);
    return { logs: sink.logs, events: [], error, ...(name ? { instruction: name } : {}) };
  }
}

function decodeInstruction(data: Buffer): { name: string; data: Record<string, unknown> } {
  if (data.length < 8) throw frameworkError('InstructionFallbackNotFound');
  let decoded: { name: string; data: object } | null;
  try {
    decoded = coder.instruction.decode(data);
  } catch {
    throw frameworkError('InstructionDidNotDeserialize');
  }
  if (!decoded) throw frameworkError('InstructionFallbackNotFound');
  return { name: decoded.name, data: decoded.data as Record<string, unknown> };
}
