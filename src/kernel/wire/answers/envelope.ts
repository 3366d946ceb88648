/**
 * The answers' JSON shapes that the browser pages (web/) read, declared once for the server
 * that builds them and the pages that read them: types only, no code, no import from
 * outside this folder (.dependency-cruiser.cjs), so esbuild drops them from the bundles.
 *
 * SPEC.md's envelopes. Some endpoints answer bare arrays or objects instead (per route).
 */
export interface SuccessEnvelope<T> { success: true; data: T; timestamp: number }
export interface ErrorEnvelope { error: string; code: string; success: false; timestamp: number }
