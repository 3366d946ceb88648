/**
 * The vendored IDL of the on-chain Tributary program (Anchor 0.30+ format, docs removed).
 * Everything that decodes or encodes program data reads its layouts from here.
 */
import type { Idl } from '@coral-xyz/anchor';
import raw from './tributary.json' with { type: 'json' };

export const idl = raw as unknown as Idl;
export const PROGRAM_ID = raw.address;

export type IdlTypeRef =
  | string
  | { array: [IdlTypeRef, number] }
  | { option: IdlTypeRef }
  | { vec: IdlTypeRef }
  | { defined: { name: string } };

export interface IdlField { name: string; type: IdlTypeRef }
export type IdlVariant = { name: string; fields?: (IdlField | IdlTypeRef)[] };
export type IdlTypeDef =
  | { name: string; type: { kind: 'struct'; fields?: IdlField[] } }
  | { name: string; type: { kind: 'enum'; variants: IdlVariant[] } };

const typeDefs = new Map<string, IdlTypeDef>(
  (raw.types as unknown as IdlTypeDef[]).map((t) => [t.name, t]),
);

export function idlType(name: string): IdlTypeDef {
  const t = typeDefs.get(name);
  if (!t) throw new Error(`IDL has no type ${name}`);
  return t;
}

export const idlEvents: readonly { name: string; discriminator: number[] }[] = raw.events;
export const idlAccounts: readonly { name: string; discriminator: number[] }[] = raw.accounts;
