#!/usr/bin/env python3
"""A merchant in Python (standard library only) selling GET /report through the
Tributary x402 facilitator: no Solana library, no key, no chain connection here.

At start it registers the resource and its requirement (PUT /v1/x402/resources) and
serves the `accepts` entries the facilitator answers. Discovery lists the resource once
the merchant proved it controls the origin: it serves the token the registration answered
at /.well-known/tributary-x402.txt and asks for the check (POST /v1/x402/resources/verify).
Then, per request:
  - no Payment header and no bearer JWT: 402 with the accepts list;
  - `Payment: <base64 JSON>`: POST /v1/x402/settle; on success 200 with the JWT and the
    Payment-Response header, else 402 with the reason;
  - `Authorization: Bearer <jwt>`: POST /v1/x402/usage (admitted, metered) -> 200 with the
    report, else 402.

Settings (environment): TRIBUTARY_URL, TRIBUTARY_API_KEY (from
POST /v1/gateway/{gateway}/api-keys), MERCHANT_HOST, MERCHANT_PORT, MERCHANT_PUBLIC_URL,
X402_SCHEME (deferred | x402://payg), X402_NETWORK, X402_AMOUNT, X402_RECIPIENT,
X402_GATEWAY, X402_TOKEN_MINT.
"""
import base64
import json
import os
import sys
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

API = os.environ.get("TRIBUTARY_URL", "http://127.0.0.1:3000").rstrip("/")
API_KEY = os.environ["TRIBUTARY_API_KEY"]
HOST = os.environ.get("MERCHANT_HOST", "127.0.0.1")
PORT = int(os.environ.get("MERCHANT_PORT", "8402"))
PUBLIC = os.environ.get("MERCHANT_PUBLIC_URL", f"http://{HOST}:{PORT}").rstrip("/")


def facilitator(method, path, body):
    """One JSON call to the facilitator; returns (status, answer)."""
    req = urllib.request.Request(
        API + path, method=method, data=json.dumps(body).encode(),
        headers={"content-type": "application/json", "x-api-key": API_KEY},
    )
    try:
        with urllib.request.urlopen(req, timeout=60) as res:
            return res.status, json.loads(res.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def register():
    """Registers /report with its requirement; answers the accepts entries to serve."""
    requirement = {
        "scheme": os.environ.get("X402_SCHEME", "deferred"),
        "network": os.environ.get("X402_NETWORK", "solana:localnet"),
        "amount": os.environ.get("X402_AMOUNT", "1000000"),
        "recipient": os.environ["X402_RECIPIENT"],
        "gateway": os.environ["X402_GATEWAY"],
        "tokenMint": os.environ["X402_TOKEN_MINT"],
        "description": "daily report (python merchant)",
    }
    status, answer = facilitator("PUT", "/v1/x402/resources", {
        "resource": PUBLIC + "/report", "description": "a daily report",
        "input": {"method": "GET"}, "output": {"mimeType": "application/json"},
        "accepts": [requirement],
    })
    if status != 200:
        sys.exit(f"registration failed: {status} {answer}")
    return answer["accepts"], answer.get("proof")


ACCEPTS, PROOF = register()
TOKEN_FILE = "/.well-known/tributary-x402.txt"


def prove_origin():
    """Asks the facilitator to fetch our token file; a failure leaves the resource unlisted, payments still work."""
    if PROOF is None:
        return
    status, answer = facilitator("POST", "/v1/x402/resources/verify", {"origin": PROOF["origin"]})
    if status != 200:
        print(f"origin not proven, the resource is not listed in discovery: {answer.get('error', status)}", file=sys.stderr, flush=True)


class Handler(BaseHTTPRequestHandler):
    def reply(self, status, body, headers=None):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def refuse(self, reason):
        first = ACCEPTS[0]
        keys = ["scheme", "network", "resource", "id", "amount", "currency", "recipient", "gateway", "tokenMint"]
        header = ",".join(f"{k}={str(first[k]).replace(',', '%2C')}" for k in keys)
        self.reply(402, {"x402Version": 2, "accepts": ACCEPTS, "error": reason, "code": "payment_required", "success": False},
                   {"Payment-Required": header})

    def do_GET(self):
        if self.path == TOKEN_FILE and PROOF is not None:
            data = (PROOF["token"] + "\n").encode()
            self.send_response(200)
            self.send_header("content-type", "text/plain")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            return self.wfile.write(data)
        if self.path.split("?")[0] != "/report":
            return self.reply(404, {"error": "not found"})
        payment = self.headers.get("Payment")
        if payment is not None:
            try:
                payload = json.loads(base64.b64decode(payment.strip(), validate=True))
            except ValueError:
                return self.refuse("the Payment header is not Base64 JSON")
            chosen = next((a for a in ACCEPTS if a["id"] == payload.get("id")), ACCEPTS[0])
            status, answer = facilitator("POST", "/v1/x402/settle", {"paymentPayload": payload, "paymentRequirements": chosen})
            if status == 200 and answer.get("success"):
                return self.reply(200, {"jwt": answer["jwt"], "message": "paid; present the JWT as a bearer token"},
                                  {"Payment-Response": answer["paymentResponse"]})
            return self.refuse(answer.get("errorReason") or answer.get("error") or f"settlement failed ({status})")
        auth = self.headers.get("Authorization", "")
        if auth.lower().startswith("bearer "):
            status, answer = facilitator("POST", "/v1/x402/usage", {"jwt": auth[7:].strip(), "paymentRequirements": ACCEPTS})
            if status == 200 and answer.get("admitted"):
                return self.reply(200, {"content": "the python merchant's daily report", "grant": answer})
            return self.refuse(answer.get("reason") or answer.get("error") or f"usage refused ({status})")
        return self.refuse("payment required: send a Payment header or a bearer JWT")

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer((HOST, PORT), Handler)
    serving = threading.Thread(target=server.serve_forever)
    serving.start()
    # the token file is served from here on: the facilitator may fetch it
    prove_origin()
    print(f"python merchant listening on {PUBLIC}/report", flush=True)
    serving.join()
