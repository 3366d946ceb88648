/** The shapes of the payer account's API (docs/payers.md), as the page reads them: the wire module's (types only). */
export type {
  LastPayment, PayerChallenge as Challenge, PayerList, PayerPayment as Payment, PayerSubscription as Subscription,
  PayerToken, PolicyAction, RelayResult as RelayAnswer, UnsignedTransaction as UnsignedAnswer,
} from '../../src/kernel/wire/answers/payer.js';
