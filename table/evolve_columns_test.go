package table_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icetable "github.com/apache/iceberg-go/table"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/icerun/icerun/schema"
	"github.com/icerun/icerun/table"
)

var geoColumn = table.NewColumn{Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
	{Name: "lat", Type: iceberg.PrimitiveTypes.Float64},
}}}

// AddColumns adds what the table lacks, nested fields included, in one
// commit; a rerun commits nothing.
func TestAddColumnsRerunIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	note := table.NewColumn{Name: "note", Type: iceberg.PrimitiveTypes.String, Doc: "free text"}
	change, err := w.AddColumns(ctx, note, geoColumn)
	require.NoError(t, err)
	assert.Equal(t, []string{"note", "geo"}, additions(change))

	geoAlt := table.NewColumn{Name: "geo", Type: &iceberg.StructType{FieldList: []iceberg.NestedField{
		{Name: "lat", Type: iceberg.PrimitiveTypes.Float64}, {Name: "alt", Type: iceberg.PrimitiveTypes.Float32},
	}}}
	change, err = w.AddColumns(ctx, geoAlt)
	require.NoError(t, err)
	assert.Equal(t, []string{"geo.alt"}, additions(change))
	before, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	f, ok := before.Schema().FindFieldByName("note")
	require.True(t, ok)
	assert.Equal(t, "free text", f.Doc)

	for _, again := range [][]table.NewColumn{{note, geoAlt}, {geoColumn}, {{Name: "customer_id", Type: iceberg.PrimitiveTypes.Int32}}} {
		change, err := w.AddColumns(ctx, again...)
		require.NoError(t, err)
		assert.Empty(t, change.Added, "rerun of %v", again)
		assert.Equal(t, before.Schema().ID, change.SchemaID)
	}
	require.NoError(t, w.AddColumn(ctx, note), "AddColumn of a column the table has")
	after, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	assert.Equal(t, before.MetadataLocation(), after.MetadataLocation(), "a rerun committed")
}

func additions(c table.SchemaChange) []string {
	var out []string
	for _, a := range c.Added {
		out = append(out, strings.Join(a.Path, "."))
	}
	return out
}

// A column the table has with a type the new one does not fit is refused,
// with the error a write of such values gets, and nothing changes: the
// other columns of the call are not added either.
func TestAddColumnsRefusesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	_, err := w.AddColumns(ctx, table.NewColumn{Name: "score", Type: iceberg.PrimitiveTypes.Float64})
	require.NoError(t, err)
	for _, bad := range []table.NewColumn{
		{Name: "score", Type: iceberg.PrimitiveTypes.Int64}, // a long above 2^53 does not survive a double
		{Name: "customer_id", Type: iceberg.PrimitiveTypes.String},
		{Name: "", Type: iceberg.PrimitiveTypes.String},
	} {
		_, err := w.AddColumns(ctx, table.NewColumn{Name: "other", Type: iceberg.PrimitiveTypes.Bool}, bad)
		assert.ErrorIs(t, err, table.ErrSchemaChange, "%s %v", bad.Name, bad.Type)
		if bad.Name != "" {
			assert.ErrorIs(t, err, schema.ErrIncompatibleType, "%s %v", bad.Name, bad.Type)
		}
	}
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	_, ok := tbl.Schema().FindFieldByName("other")
	assert.False(t, ok, "a refused call added a column")
}

// The table's name mapping gains the new columns and keeps the aliases
// of renamed ones; a table without a mapping is not given one.
func TestAddColumnsKeepsNameMapping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	w := open(t, cat, ident)
	_, err := w.AddColumns(ctx, table.NewColumn{Name: "note", Type: iceberg.PrimitiveTypes.String})
	require.NoError(t, err)
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	_, has := tbl.Properties()[icetable.DefaultNameMappingKey]
	require.False(t, has, "AddColumns gave a table without a name mapping one")

	replaceDay(t, w, day0, 3) // writes the mapping
	updateSchema(t, cat, ident, func(u *icetable.UpdateSchema) { u.RenameColumn([]string{"currency"}, "currency_code") })
	replaceDay(t, w, day0, 3) // keeps currency as an alias of currency_code
	_, err = w.AddColumns(ctx, geoColumn)
	require.NoError(t, err)
	tbl, err = cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	var nm iceberg.NameMapping
	require.NoError(t, json.Unmarshal([]byte(tbl.Properties()[icetable.DefaultNameMappingKey]), &nm))
	names := map[string][]int{} // mapped name -> field ids, "geo.lat" for nested
	var walk func(prefix string, fs []iceberg.MappedField)
	walk = func(prefix string, fs []iceberg.MappedField) {
		for _, f := range fs {
			for _, n := range f.Names {
				if f.FieldID != nil {
					names[prefix+n] = append(names[prefix+n], *f.FieldID)
				}
				walk(prefix+n+".", f.Fields)
			}
		}
	}
	walk("", nm)
	cc, _ := tbl.Schema().FindFieldByName("currency_code")
	geo, _ := tbl.Schema().FindFieldByName("geo")
	lat, _ := tbl.Schema().FindFieldByName("geo.lat")
	assert.Equal(t, []int{cc.ID}, names["currency"], "the alias of the renamed column")
	assert.Equal(t, []int{cc.ID}, names["currency_code"])
	assert.Equal(t, []int{geo.ID}, names["geo"], "the new column")
	assert.Equal(t, []int{lat.ID}, names["geo.lat"], "the new column's field")
}

// Writers adding columns at once each get theirs: a lost race is decided
// again on the reloaded table.
func TestAddColumnsRace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cat, ident, _ := ordersTable(t)
	const n = 4
	writers := make([]*table.Writer, n)
	for i := range writers {
		writers[i] = open(t, cat, ident)
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// every writer adds the shared column too
			_, errs[i] = w.AddColumns(ctx, table.NewColumn{Name: fmt.Sprintf("c%d", i), Type: iceberg.PrimitiveTypes.Int64}, table.NewColumn{Name: "shared", Type: iceberg.PrimitiveTypes.String})
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	tbl, err := cat.LoadTable(ctx, ident)
	require.NoError(t, err)
	var got []string
	for _, f := range tbl.Schema().Fields() {
		if f.Name == "shared" || strings.HasPrefix(f.Name, "c") && len(f.Name) == 2 {
			got = append(got, f.Name)
		}
	}
	slices.Sort(got)
	assert.Equal(t, []string{"c0", "c1", "c2", "c3", "shared"}, got)
}
