#!/bin/sh
# A curl session with the x402 facilitator: verify, then settle, the Payment a client sent.
#   TRIBUTARY_URL       the service, e.g. http://127.0.0.1:3000
#   TRIBUTARY_API_KEY   a gateway API key (POST /v1/gateway/{gateway}/api-keys)
#   PAYMENT             the client's Payment header value (base64 JSON)
#   REQUIREMENTS        the accepts entry it pays (JSON)
set -eu
PAYLOAD=$(printf '%s' "$PAYMENT" | base64 -d)
BODY=$(printf '{"x402Version":2,"paymentPayload":%s,"paymentRequirements":%s}' "$PAYLOAD" "$REQUIREMENTS")

echo "== verify"
curl -sS -X POST "$TRIBUTARY_URL/v1/x402/verify" \
  -H 'content-type: application/json' -H "x-api-key: $TRIBUTARY_API_KEY" -d "$BODY"
echo
echo "== settle"
curl -sS -X POST "$TRIBUTARY_URL/v1/x402/settle" \
  -H 'content-type: application/json' -H "x-api-key: $TRIBUTARY_API_KEY" -d "$BODY"
echo
