// Verifies a webhook delivery of the messaging gateway (docs/webhooks.md#verifying-signatures), standard library only.
// Run directly, it reads {"secret", "headers", "body", "now_s"} as JSON on stdin and exits 0 when the delivery is
// genuine, 1 when not: the test suite checks it against the published test vector (test-vector.json).
package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"
)

// Reject deliveries signed more than 5 minutes ago (replayed requests).
const toleranceSeconds = 300

// VerifyWebhook returns the event when the delivery is genuine. headers are the request headers (any case); rawBody
// is the body exactly as received, before any JSON parsing.
func VerifyWebhook(secret string, headers map[string]string, rawBody []byte, now time.Time) (map[string]any, error) {
	h := map[string]string{}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	timestamp, signature := h["x-webhook-timestamp"], h["x-webhook-signature"]
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || !strings.HasPrefix(signature, "v1=") {
		return nil, errors.New("missing or malformed signature headers")
	}
	if age := now.Unix() - ts; age > toleranceSeconds || age < -toleranceSeconds {
		return nil, errors.New("timestamp outside the 5-minute tolerance")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(rawBody)
	expected := hex.EncodeToString(mac.Sum(nil))
	if !hmac.Equal([]byte(expected), []byte(strings.TrimPrefix(signature, "v1="))) {
		return nil, errors.New("signature mismatch")
	}
	var event map[string]any
	if err := json.Unmarshal(rawBody, &event); err != nil {
		return nil, err
	}
	// The delivery id is signed inside the body: a body re-sent under another X-Webhook-Delivery is refused.
	if id, _ := event["delivery_id"].(string); id != h["x-webhook-delivery"] {
		return nil, errors.New("delivery id mismatch")
	}
	return event, nil
}

// In a net/http handler, de-duplicating on the signed delivery_id (the same on every retry and replay):
//
//	body, _ := io.ReadAll(r.Body)
//	headers := map[string]string{}
//	for k := range r.Header { headers[k] = r.Header.Get(k) }
//	event, err := VerifyWebhook(os.Getenv("WEBHOOK_SECRET"), headers, body, time.Now())
//	if err != nil { w.WriteHeader(http.StatusUnauthorized); return }
//	if !alreadySeen(event["delivery_id"].(string)) { handle(event) } // your database, kept at least a day
//	w.WriteHeader(http.StatusNoContent)

func main() {
	var given struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    string            `json:"body"`
		NowS    *int64            `json:"now_s"`
	}
	if err := json.NewDecoder(os.Stdin).Decode(&given); err != nil {
		os.Exit(2)
	}
	now := time.Now()
	if given.NowS != nil {
		now = time.Unix(*given.NowS, 0)
	}
	if _, err := VerifyWebhook(given.Secret, given.Headers, []byte(given.Body), now); err != nil {
		os.Exit(1)
	}
}
