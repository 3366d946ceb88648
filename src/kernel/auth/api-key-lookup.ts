/**
 * Who a gateway API key (`tak_<id>_<secret>`, commands/api-keys) acts for. The contract a
 * source must meet: undefined when the key is malformed, unknown or revoked; `id` is the
 * key's public id (what a revocation names), `createdBy` the wallet whose sign-in made it
 * (null: the administrator).
 */
export interface ApiKeyOwner { id: string; gateway: string; createdBy: string | null }

export type ApiKeyLookup = (presented: string) => Promise<ApiKeyOwner | undefined>;
