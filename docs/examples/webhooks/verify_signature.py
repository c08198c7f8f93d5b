"""Verifying a webhook from the messaging gateway in Python (standard library only).

Copy verify_webhook into your receiver and pass the body exactly as received (bytes, before any JSON parsing).
The bottom of this file lets the test suite run it against real deliveries:
`python3 verify_signature.py < {"secret","headers","body"}` exits 0 when the signature is valid.
"""
import hashlib
import hmac
import time
from typing import Mapping, Optional

TOLERANCE_S = 300  # reject deliveries signed more than 5 minutes ago (replayed requests)


def verify_webhook(secret: str, headers: Mapping[str, str], raw_body: bytes, now: Optional[float] = None) -> bool:
    h = {k.lower(): v for k, v in headers.items()}
    timestamp = h.get("x-webhook-timestamp", "")
    signature = h.get("x-webhook-signature", "")
    if not timestamp.isdigit() or not signature.startswith("v1="):
        return False
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_S:
        return False
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, signature[len("v1="):])


# Example (Flask):
#   @app.post("/gateway-webhook")
#   def hook():
#       if not verify_webhook(os.environ["WEBHOOK_SECRET"], request.headers, request.get_data()):
#           abort(401)
#       event = request.get_json()  # de-duplicate on request.headers["X-Webhook-Delivery"]
#       return "", 204

if __name__ == "__main__":
    import json
    import sys

    given = json.load(sys.stdin)
    ok = verify_webhook(given["secret"], given["headers"], given["body"].encode(), given.get("now_s"))
    sys.exit(0 if ok else 1)
