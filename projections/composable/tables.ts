/** The composable policy read model has the payment policies' row shapes (see ../policies/tables.ts). */
export type { ComposableTables } from '../policies/tables.js';
