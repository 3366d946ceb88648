/** The JSON form of decoded event data (codec.ts states its rules). */
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };
export type EventData = { [field: string]: Json };
