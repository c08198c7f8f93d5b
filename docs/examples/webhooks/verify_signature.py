"""Verifying a webhook from the messaging gateway in Python (standard library only).

Copy verify_webhook into your receiver and pass the body exactly as received (bytes, before any JSON parsing).
The bottom of this file lets the test suite run it against real deliveries:
`python3 verify_signature.py < {"secret","headers","body"}` exits 0 when the delivery is genuine.
"""
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, Optional

TOLERANCE_S = 300  # reject deliveries signed more than 5 minutes ago (replayed requests)


def verify_webhook(secret: str, headers: Mapping[str, str], raw_body: bytes, now: Optional[float] = None) -> Optional[dict[str, Any]]:
    """The event when the delivery is genuine, else None."""
    h = {k.lower(): v for k, v in headers.items()}
    timestamp = h.get("x-webhook-timestamp", "")
    signature = h.get("x-webhook-signature", "")
    if not timestamp.isdigit() or not signature.startswith("v1="):
        return None
    if abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_S:
        return None
    expected = hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature[len("v1="):]):
        return None
    event = json.loads(raw_body)
    # The delivery id is signed inside the body: a body re-sent under another X-Webhook-Delivery is refused.
    if event.get("delivery_id") != h.get("x-webhook-delivery"):
        return None
    return event


# Example (Flask), de-duplicating on the signed delivery_id (the same on every retry and replay):
#   @app.post("/gateway-webhook")
#   def hook():
#       event = verify_webhook(os.environ["WEBHOOK_SECRET"], request.headers, request.get_data())
#       if event is None:
#           abort(401)
#       if not already_seen(event["delivery_id"]):  # your database, kept at least a day
#           handle(event)
#       return "", 204

if __name__ == "__main__":
    import sys

    given = json.load(sys.stdin)
    ok = verify_webhook(given["secret"], given["headers"], given["body"].encode(), given.get("now_s"))
    sys.exit(0 if ok is not None else 1)
