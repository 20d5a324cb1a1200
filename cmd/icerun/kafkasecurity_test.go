package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretText is the password and token of these tests: no error, help
// or log may show it.
const secretText = "s3cret-Pa55"

// writePEM writes a self-signed certificate and its key under dir and
// returns their paths.
func writePEM(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return cert, key
}

// mechanism is the SASL mechanism k's options hold, authenticated once
// (which reads the secret as a connection would), or "".
func mechanism(t *testing.T, k *kafkaSecurity) (name string, first []byte, err error) {
	t.Helper()
	m, err := k.sasl()
	if err != nil || m == nil {
		return "", nil, err
	}
	_, first, err = m.Authenticate(context.Background(), "b-1.example.kafka.eu-west-1.amazonaws.com:9098")
	return m.Name(), first, err
}

func TestKafkaSecurityOptions(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePEM(t, dir)
	pwFile := filepath.Join(dir, "password")
	if err := os.WriteFile(pwFile, []byte(secretText+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{envSASLPassword: secretText, envOAuthToken: secretText, "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": secretText}
	getenv := func(k string) string { return env[k] }
	good := []struct {
		k        kafkaSecurity
		opts     int    // franz-go options
		mech     string // SASL mechanism name
		inFirst  string // in the first SASL message
		tlsCerts int
	}{
		{kafkaSecurity{}, 0, "", "", 0},
		{kafkaSecurity{clientID: "orders-sink"}, 1, "", "", 0},
		{kafkaSecurity{tls: true}, 1, "", "", 0},
		{kafkaSecurity{caFile: cert}, 1, "", "", 0},
		{kafkaSecurity{caFile: cert, certFile: cert, keyFile: key}, 1, "", "", 1},
		{kafkaSecurity{mechanism: "plain", user: "u"}, 1, "PLAIN", "\x00u\x00" + secretText, 0},
		{kafkaSecurity{mechanism: "PLAIN", user: "u", passwordFile: pwFile}, 1, "PLAIN", "\x00u\x00" + secretText, 0}, // the newline dropped
		{kafkaSecurity{mechanism: "scram-sha-256", user: "u"}, 1, "SCRAM-SHA-256", "n=u", 0},
		{kafkaSecurity{mechanism: "SCRAM-SHA-512", user: "u", tls: true, clientID: "c"}, 3, "SCRAM-SHA-512", "n=u", 0},
		{kafkaSecurity{mechanism: "oauthbearer"}, 1, "OAUTHBEARER", "auth=Bearer " + secretText, 0},
		{kafkaSecurity{mechanism: "AWS_MSK_IAM"}, 1, "AWS_MSK_IAM", "AKID", 0},
	}
	for _, tc := range good {
		k := tc.k
		k.getenv = getenv
		opts, err := k.options()
		if err != nil {
			t.Errorf("options(%+v) = %v", tc.k, err)
			continue
		}
		if len(opts) != tc.opts {
			t.Errorf("options(%+v) = %d options, want %d", tc.k, len(opts), tc.opts)
		}
		name, first, err := mechanism(t, &k)
		if err != nil || name != tc.mech || !strings.Contains(string(first), tc.inFirst) {
			t.Errorf("mechanism of %+v = %q (%q), %v; want %q with %q", tc.k, name, first, err, tc.mech, tc.inFirst)
		}
		cfg, err := k.tlsConfig()
		if err != nil || (cfg != nil) != (tc.tlsCerts > 0 || k.tls || k.caFile != "") || cfg != nil && len(cfg.Certificates) != tc.tlsCerts {
			t.Errorf("tlsConfig(%+v) = %+v, %v; want %d client certificates", tc.k, cfg, err, tc.tlsCerts)
		}
	}

	bad := []struct {
		k    kafkaSecurity
		env  map[string]string
		want string
	}{
		{kafkaSecurity{caFile: filepath.Join(dir, "none.pem")}, nil, "-kafka-tls-ca"},
		{kafkaSecurity{caFile: pwFile}, nil, "no PEM certificate"},
		{kafkaSecurity{certFile: cert}, nil, "go together"},
		{kafkaSecurity{certFile: cert, keyFile: pwFile}, nil, "-kafka-tls-key"},
		{kafkaSecurity{mechanism: "gssapi"}, nil, `-kafka-sasl "gssapi"`},
		{kafkaSecurity{mechanism: "plain"}, env, "needs -kafka-sasl-user"},
		{kafkaSecurity{mechanism: "scram-sha-256", user: "u"}, map[string]string{}, "give -kafka-sasl-password-file or set " + envSASLPassword},
		{kafkaSecurity{mechanism: "scram-sha-256", user: "u", passwordFile: filepath.Join(dir, "nope")}, env, "-kafka-sasl-password-file " + filepath.Join(dir, "nope") + ": no such file"},
		{kafkaSecurity{mechanism: "oauthbearer"}, map[string]string{}, envOAuthToken},
		{kafkaSecurity{mechanism: "aws-msk-iam"}, map[string]string{"AWS_ACCESS_KEY_ID": "AKID"}, "AWS_SECRET_ACCESS_KEY"},
		{kafkaSecurity{user: "u"}, env, "need -kafka-sasl"},
	}
	for _, tc := range bad {
		k := tc.k
		k.getenv = func(s string) string { return tc.env[s] }
		_, err := k.options()
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("options(%+v) = %v, want a usage error with %q", tc.k, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), secretText) {
			t.Errorf("options(%+v) = %v: the error shows the secret", tc.k, err)
		}
	}
}

// A password file that is gone when a connection authenticates fails
// that authentication with an error naming the file, not the password.
func TestKafkaSecretReadOnEveryConnection(t *testing.T) {
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte("first"), 0o600); err != nil {
		t.Fatal(err)
	}
	k := kafkaSecurity{mechanism: "plain", user: "u", passwordFile: pw}
	m, err := k.sasl()
	if err != nil {
		t.Fatal(err)
	}
	auth := func() (string, error) {
		_, first, err := m.Authenticate(context.Background(), "h:1")
		return string(first), err
	}
	if err := os.WriteFile(pw, []byte(secretText), 0o600); err != nil { // rotated
		t.Fatal(err)
	}
	if got, err := auth(); err != nil || got != "\x00u\x00"+secretText {
		t.Errorf("after a rotation: %q, %v; want the new password", got, err)
	}
	if err := os.Remove(pw); err != nil {
		t.Fatal(err)
	}
	if _, err := auth(); err == nil || !strings.Contains(err.Error(), pw) || strings.Contains(err.Error(), secretText) {
		t.Errorf("without the file: %v, want an error naming it and not the password", err)
	}
}

// The help of `icerun sink` lists the security flags and, with the
// secrets in the environment and every flag given by its variable, shows
// none of them.
func TestSinkHelpShowsNoSecret(t *testing.T) {
	t.Setenv(envSASLPassword, secretText)
	t.Setenv(envOAuthToken, secretText)
	t.Setenv(sinkEnvName("kafka-sasl-user"), secretText)
	code, out, errs := icerun("sink", "-h")
	if code != 0 {
		t.Fatalf("icerun sink -h = %d: %s", code, errs)
	}
	for _, f := range []string{"-kafka-tls", "-kafka-tls-ca", "-kafka-tls-cert", "-kafka-tls-key", "-kafka-sasl", "-kafka-sasl-user", "-kafka-sasl-password-file", "-kafka-oauth-token-file", "-client-id", "-topic-regex", "-skip", envSASLPassword, envOAuthToken} {
		if !strings.Contains(out, f) {
			t.Errorf("icerun sink -h lacks %s", f)
		}
	}
	if strings.Contains(out+errs, secretText) {
		t.Errorf("icerun sink -h shows a secret:\n%s", out)
	}
}
