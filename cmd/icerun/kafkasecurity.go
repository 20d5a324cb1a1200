package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/aws"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// The secrets of `icerun sink`'s Kafka connection that may come from the
// environment. They have no flag (a command line is visible to every
// user of the machine): a flag names a file holding them instead.
const (
	envSASLPassword = "ICERUN_SINK_KAFKA_SASL_PASSWORD" // -kafka-sasl-password-file
	envOAuthToken   = "ICERUN_SINK_KAFKA_OAUTH_TOKEN"   // -kafka-oauth-token-file
)

// SASL mechanisms of -kafka-sasl.
const (
	saslPlain     = "plain"
	saslSCRAM256  = "scram-sha-256"
	saslSCRAM512  = "scram-sha-512"
	saslOAuth     = "oauthbearer"
	saslAWSMSKIAM = "aws-msk-iam"
)

// errKafkaSecurity: the TLS or SASL settings of `icerun sink` are
// incomplete or cannot be read. It is a usage error (exit 64). Its texts
// name flags, variables and files, never a secret.
var errKafkaSecurity = fmt.Errorf("%w: kafka security", errUsage)

// kafkaSecurity is how `icerun sink` connects to the brokers: the client
// id, TLS and SASL. Secrets are read from files or the environment when
// the client authenticates (each new connection), so a rotated password
// or token file is picked up, and never printed.
type kafkaSecurity struct {
	clientID string

	tls                     bool
	caFile, certFile        string
	keyFile, serverName     string
	mechanism, user         string
	passwordFile, tokenFile string // -kafka-sasl-password-file, -kafka-oauth-token-file
	getenv                  func(string) string
}

// addFlags adds the flags of k to fs.
func (k *kafkaSecurity) addFlags(fs *flag.FlagSet) {
	fs.StringVar(&k.clientID, "client-id", "", "Kafka client id the brokers see (quotas, logs, ACLs); default: franz-go's (kgo)")
	fs.BoolVar(&k.tls, "kafka-tls", false, "connect to the brokers with TLS, verified against the system's roots (or -kafka-tls-ca); implied by the other -kafka-tls-* flags")
	fs.StringVar(&k.caFile, "kafka-tls-ca", "", "PEM `FILE` of the CA certificates that verify the brokers (instead of the system's)")
	fs.StringVar(&k.certFile, "kafka-tls-cert", "", "PEM `FILE` of the client certificate (mutual TLS; with -kafka-tls-key)")
	fs.StringVar(&k.keyFile, "kafka-tls-key", "", "PEM `FILE` of the client certificate's private key (with -kafka-tls-cert)")
	fs.StringVar(&k.serverName, "kafka-tls-server-name", "", "name the brokers' certificates are verified against (default: the host of each broker address)")
	fs.StringVar(&k.mechanism, "kafka-sasl", "", "SASL mechanism: plain, scram-sha-256, scram-sha-512 (with -kafka-sasl-user and a password), oauthbearer (a token), aws-msk-iam (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); default: none")
	fs.StringVar(&k.user, "kafka-sasl-user", "", "SASL user of plain and scram-*")
	fs.StringVar(&k.passwordFile, "kafka-sasl-password-file", "", "`FILE` holding the SASL password of plain and scram-* (else the variable "+envSASLPassword+"; one trailing newline is ignored)")
	fs.StringVar(&k.tokenFile, "kafka-oauth-token-file", "", "`FILE` holding the OAUTHBEARER token, read again on every new connection (else the variable "+envOAuthToken+")")
}

// options are the franz-go options of k.
func (k *kafkaSecurity) options() ([]kgo.Opt, error) {
	if k.getenv == nil {
		k.getenv = os.Getenv
	}
	var opts []kgo.Opt
	if k.clientID != "" {
		opts = append(opts, kgo.ClientID(k.clientID))
	}
	cfg, err := k.tlsConfig()
	if err != nil {
		return nil, err
	}
	if cfg != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	m, err := k.sasl()
	if err != nil {
		return nil, err
	}
	if m != nil {
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// tlsConfig is the TLS configuration of the -kafka-tls flags, or nil.
func (k *kafkaSecurity) tlsConfig() (*tls.Config, error) {
	if !k.tls && k.caFile == "" && k.certFile == "" && k.keyFile == "" && k.serverName == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: k.serverName}
	if k.caFile != "" {
		pem, err := os.ReadFile(k.caFile)
		if err != nil {
			return nil, fmt.Errorf("%w: -kafka-tls-ca: %w", errKafkaSecurity, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: -kafka-tls-ca %s: no PEM certificate in it", errKafkaSecurity, k.caFile)
		}
	}
	switch {
	case (k.certFile == "") != (k.keyFile == ""):
		return nil, fmt.Errorf("%w: -kafka-tls-cert and -kafka-tls-key go together", errKafkaSecurity)
	case k.certFile != "":
		cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
		if err != nil { // the error names no key material
			return nil, fmt.Errorf("%w: -kafka-tls-cert %s and -kafka-tls-key %s: %w", errKafkaSecurity, k.certFile, k.keyFile, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// sasl is the mechanism of -kafka-sasl, or nil.
func (k *kafkaSecurity) sasl() (sasl.Mechanism, error) {
	mech := strings.ReplaceAll(strings.ToLower(k.mechanism), "_", "-")
	if mech == "" {
		if k.user != "" || k.passwordFile != "" || k.tokenFile != "" {
			return nil, fmt.Errorf("%w: -kafka-sasl-user, -kafka-sasl-password-file and -kafka-oauth-token-file need -kafka-sasl", errKafkaSecurity)
		}
		return nil, nil
	}
	switch mech {
	case saslPlain, saslSCRAM256, saslSCRAM512:
		if k.user == "" {
			return nil, fmt.Errorf("%w: -kafka-sasl %s needs -kafka-sasl-user", errKafkaSecurity, mech)
		}
		if _, err := k.secret(k.passwordFile, "-kafka-sasl-password-file", envSASLPassword); err != nil {
			return nil, err // checked once at the start, read again on every connection
		}
		password := func() (string, error) {
			return k.secret(k.passwordFile, "-kafka-sasl-password-file", envSASLPassword)
		}
		if mech == saslPlain {
			return plain.Plain(func(context.Context) (plain.Auth, error) {
				p, err := password()
				return plain.Auth{User: k.user, Pass: p}, err
			}), nil
		}
		auth := func(context.Context) (scram.Auth, error) {
			p, err := password()
			return scram.Auth{User: k.user, Pass: p}, err
		}
		if mech == saslSCRAM256 {
			return scram.Sha256(auth), nil
		}
		return scram.Sha512(auth), nil
	case saslOAuth:
		if _, err := k.secret(k.tokenFile, "-kafka-oauth-token-file", envOAuthToken); err != nil {
			return nil, err
		}
		return oauth.Oauth(func(context.Context) (oauth.Auth, error) {
			t, err := k.secret(k.tokenFile, "-kafka-oauth-token-file", envOAuthToken)
			return oauth.Auth{Token: t}, err
		}), nil
	case saslAWSMSKIAM:
		if _, err := k.awsAuth(); err != nil {
			return nil, err
		}
		return aws.ManagedStreamingIAM(func(context.Context) (aws.Auth, error) { return k.awsAuth() }), nil
	}
	return nil, fmt.Errorf("%w: -kafka-sasl %q: want %s, %s, %s, %s or %s", errKafkaSecurity, k.mechanism,
		saslPlain, saslSCRAM256, saslSCRAM512, saslOAuth, saslAWSMSKIAM)
}

// secret reads a secret from file (its content, one trailing newline
// dropped), or, without one, from the variable env. Its errors name the
// flag, the file or the variable, never the content.
func (k *kafkaSecurity) secret(file, flagName, env string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return "", fmt.Errorf("%w: %s %s: %w", errKafkaSecurity, flagName, file, err)
		}
		s := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
		if s == "" {
			return "", fmt.Errorf("%w: %s %s is empty", errKafkaSecurity, flagName, file)
		}
		return s, nil
	}
	if s := k.getenv(env); s != "" {
		return s, nil
	}
	return "", fmt.Errorf("%w: no secret: give %s or set %s", errKafkaSecurity, flagName, env)
}

// awsAuth is the AWS credentials of the standard variables.
func (k *kafkaSecurity) awsAuth() (aws.Auth, error) {
	a := aws.Auth{AccessKey: k.getenv("AWS_ACCESS_KEY_ID"), SecretKey: k.getenv("AWS_SECRET_ACCESS_KEY"), SessionToken: k.getenv("AWS_SESSION_TOKEN"), UserAgent: "icerun"}
	if a.AccessKey == "" || a.SecretKey == "" {
		return aws.Auth{}, fmt.Errorf("%w: -kafka-sasl %s needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN for temporary credentials)", errKafkaSecurity, saslAWSMSKIAM)
	}
	return a, nil
}
