/**
 * Fresh intents (pending or past due, nothing signed yet) executed as a batch: the same
 * steps and rules as one attempt (execute.ts), each done once for the whole batch, so an
 * execution costs a share of a round trip rather than a dozen of them:
 *
 *   1. the accounts of every policy, its user payment, gateway and the config
 *      (getMultipleAccounts), judged one by one as a single attempt judges them;
 *   2. one blockhash; every transaction signed;
 *   3. every signed transaction stored with its intent in one statement, before any is
 *      sent (exactly once: after a crash the chain decides about each, recover.ts);
 *   4. the stored ones sent in one JSON-RPC batch;
 *   5. their confirmations polled together (getSignatureStatuses);
 *   6. the executions recorded in one transaction, with their attempts;
 *   7. each policy's next due date read back from the chain (one getMultipleAccounts) and
 *      queued at once (outcomes.ts, enqueueNext).
 *
 * Whatever is not the plain path (a refusal, an unknown send, a confirmation that did
 * not come, a recovery's events) goes through the single-intent code in outcomes.ts.
 */
import { confirmMany, sendMany } from '../../infra/solana/sender.js';
import { latestBlockhash, signExecution } from './chain.js';
import { readExecutionContexts } from './chain-batch.js';
import { judge, settleVerdict } from './execute.js';
import type { Intent } from './intents.js';
import { markSendingMany, recordExecutedMany, type Executed } from './intents-batch.js';
import { announceSuccess, confirmed, enqueueNext, notSent, type ExecutorDeps } from './outcomes.js';

export async function executeBatch(deps: ExecutorDeps, intents: readonly Intent[]): Promise<void> {
  if (intents.length === 0) return;
  const contexts = await readExecutionContexts(deps.io, intents.map((i) => i.policy));
  const nowMs = deps.nowMs();
  const verdicts = intents.map((i, k) => ({ i, v: judge(deps, i, contexts[k]!, nowMs) }));
  await Promise.all(verdicts.flatMap(({ i, v }) => (v.kind === 'send' ? [] : [settleVerdict(deps, i, v)])));
  const sendable = verdicts.flatMap(({ i, v }) => (v.kind === 'send' ? [{ i, v }] : []));
  if (sendable.length === 0) return;

  const blockhash = await latestBlockhash(deps.io);
  const signed = sendable.map(({ i, v }) => {
    const s = signExecution(deps.io, v.context, v.signer, blockhash, null);
    const before = Number(v.context.policy.data['payment_count']);
    const intent: Intent = { ...i, status: 'sending', signature: s.signature, wire: s.wire, blockhash: s.blockhash, payment_count_before: before };
    return { intent, record: { id: i.id, ...s, paymentCountBefore: before } };
  });
  const stored = await markSendingMany(deps.db, deps.me, signed.map((s) => s.record));
  const toSend = signed.filter((s) => stored.has(s.intent.id)).map((s) => s.intent);
  if (toSend.length === 0) return;

  const results = await sendMany(deps.io, toSend.map((i) => i.wire ?? ''));
  const accepted: Intent[] = [];
  await Promise.all(toSend.flatMap((i, k) => {
    const r = results[k]!;
    if (r.kind === 'sent') { accepted.push(i); return []; }
    return [notSent(deps, i, r, false)];
  }));
  if (accepted.length === 0) return;

  const fates = await confirmMany(deps.io, accepted.map((i) => i.signature ?? ''), { timeoutMs: deps.confirmTimeoutMs });
  const landedAt = deps.nowMs();
  const landed: Executed[] = [];
  await Promise.all(accepted.flatMap((i) => {
    const fate = fates.get(i.signature ?? '') ?? { kind: 'unseen' as const };
    if (fate.kind === 'landed') { landed.push({ intent: i, lagMs: Math.max(0, landedAt - Number(i.due_at) * 1000) }); return []; }
    return [confirmed(deps, i, fate)];
  }));
  const recorded = await recordExecutedMany(deps.db, deps.me, landed);
  deps.logger.info({ executed: recorded.size, batch: intents.length }, 'scheduled payments executed');
  await enqueueNext(deps, landed.map((e) => e.intent).filter((i) => recorded.has(i.id)));
  for (const { intent } of landed) if (recorded.has(intent.id) && intent.dunning_step > 0) await announceSuccess(deps, intent);
}
