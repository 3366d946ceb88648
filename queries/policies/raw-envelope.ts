/**
 * SPEC's success envelope around data that is already JSON text (stored by a projection),
 * written straight to the response: parsing it only to serialize it again would be most
 * of what a list request costs. Written with res.end: one UTF-8 encoding, no ETag hashing
 * of a body that changes with every envelope timestamp anyway. The handler returns nothing
 * after calling it (the route layer then leaves the response alone).
 */
import type { Response } from 'express';

export function sendRawEnvelope(res: Response, dataJson: string, now: number): undefined {
  const body = Buffer.from(`{"success":true,"data":${dataJson},"timestamp":${now}}`, 'utf8');
  res.status(200);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.end(body);
  return undefined;
}
