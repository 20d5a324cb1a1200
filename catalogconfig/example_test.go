package catalogconfig_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	icetable "github.com/apache/iceberg-go/table"

	"github.com/icerun/icerun/catalogconfig"
)

// A config file in PyIceberg's shape plus one environment variable; the
// program opens the catalog by name.
func ExampleConfig_Open() {
	dir, _ := os.MkdirTemp("", "icerun-config")
	defer os.RemoveAll(dir)
	file := []byte("catalog:\n  dev:\n    type: local\n    warehouse: " + filepath.Join(dir, "warehouse") + "\n")
	environ := []string{"ICERUN_CATALOG__PROD__URI=postgres://etl@db.internal:5432/iceberg"}

	cfg, err := catalogconfig.Parse(file, environ) // catalogconfig.Load() reads ~/.icerun.yaml and os.Environ()
	if err != nil {
		fmt.Println(err)
		return
	}
	prod, _ := cfg.Properties("prod")
	fmt.Println(cfg.Names(), prod["sql.driver"], prod["sql.dialect"])

	cat, err := cfg.Open(context.Background(), "dev")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := cat.CreateNamespace(context.Background(), icetable.Identifier{"shop"}, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("opened", cat.CatalogType())
	// Output:
	// [dev prod] pg postgres
	// opened sql
}

// OpenLocal opens icerun's embedded default from any program.
func ExampleOpenLocal() {
	dir, _ := os.MkdirTemp("", "icerun-local")
	defer os.RemoveAll(dir)
	cat, err := catalogconfig.OpenLocal(context.Background(), filepath.Join(dir, "warehouse"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cat.CatalogType())
	// Output: sql
}
