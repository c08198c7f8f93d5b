<?php
// Verifies a webhook delivery of the messaging gateway (docs/webhooks.md#verifying-signatures), PHP 8, no extensions
// beyond the defaults. Run directly, it reads {"secret", "headers", "body", "now_s"} as JSON on stdin and exits 0
// when the delivery is genuine, 1 when not: the test suite checks it against the published test vector.

const WEBHOOK_TOLERANCE_S = 300; // reject deliveries signed more than 5 minutes ago (replayed requests)

/**
 * The event when the delivery is genuine, else null.
 *
 * @param array<string, string> $headers request headers (any case)
 * @param string $rawBody the body exactly as received (file_get_contents('php://input')), before json_decode
 */
function verify_webhook(string $secret, array $headers, string $rawBody, ?int $now = null): ?array
{
    $h = array_change_key_case($headers, CASE_LOWER);
    $timestamp = (string) ($h['x-webhook-timestamp'] ?? '');
    $signature = (string) ($h['x-webhook-signature'] ?? '');
    if (!ctype_digit($timestamp) || !str_starts_with($signature, 'v1=')) {
        return null;
    }
    if (abs(($now ?? time()) - (int) $timestamp) > WEBHOOK_TOLERANCE_S) {
        return null;
    }
    $expected = hash_hmac('sha256', $timestamp . '.' . $rawBody, $secret);
    if (!hash_equals($expected, substr($signature, strlen('v1=')))) {
        return null;
    }
    $event = json_decode($rawBody, true);
    // The delivery id is signed inside the body: a body re-sent under another X-Webhook-Delivery is refused.
    if (!is_array($event) || ($event['delivery_id'] ?? null) !== ($h['x-webhook-delivery'] ?? null)) {
        return null;
    }
    return $event;
}

// In a plain PHP endpoint, de-duplicating on the signed delivery_id (the same on every retry and replay):
//   $event = verify_webhook(getenv('WEBHOOK_SECRET'), getallheaders(), file_get_contents('php://input'));
//   if ($event === null) { http_response_code(401); exit; }
//   if (!already_seen($event['delivery_id'])) { handle($event); }   // your database, kept at least a day
//   http_response_code(204);

if (PHP_SAPI === 'cli' && isset($argv[0]) && realpath($argv[0]) === __FILE__) {
    $given = json_decode(stream_get_contents(STDIN), true);
    $ok = verify_webhook($given['secret'], $given['headers'], $given['body'], $given['now_s'] ?? null);
    exit($ok !== null ? 0 : 1);
}
