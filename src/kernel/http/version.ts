/** The API version reported by /v1/health and the OpenAPI document (SPEC.md, Versioning). */
export const API_VERSION = '1.9.0';
