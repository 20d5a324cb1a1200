package awsconfig

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/utils"
)

func TestContext(t *testing.T) {
	cases := []struct {
		name  string
		props iceberg.Properties
		want  bool // a configuration on the context
	}{
		{"s3 warehouse", iceberg.Properties{"warehouse": "s3://bucket/wh"}, true},
		{"s3 properties", iceberg.Properties{"warehouse": "/data", "s3.region": "eu-west-1"}, true},
		{"local warehouse", iceberg.Properties{"warehouse": "/data", "uri": "file:/data/catalog.db"}, false},
		{"nothing", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, err := Context(context.Background(), tc.props)
			if err != nil {
				t.Fatal(err)
			}
			cfg := utils.GetAwsConfig(ctx)
			if got := cfg != nil; got != tc.want {
				t.Fatalf("configuration on the context: %v, want %v", got, tc.want)
			}
			if r := tc.props["s3.region"]; cfg != nil && r != "" && cfg.Region != r {
				t.Errorf("region %q, want %q", cfg.Region, r)
			}
			again, err := Context(ctx, tc.props)
			if err != nil {
				t.Fatal(err)
			}
			if again != ctx {
				t.Error("a context that carries a configuration gets another one")
			}
		})
	}
	if _, err := Context(context.Background(), iceberg.Properties{"s3.remote-signing-enabled": "true"}); err == nil {
		t.Error("remote signing: no error, want iceberg-go's refusal")
	}
}
