package main

import (
	"errors"
	"regexp"

	"github.com/icerun/icerun/schema"
)

// nullInRequired matches the library's wording of a null in a required
// column: schema: missing required column: column "x" is null at row N.
var nullInRequired = regexp.MustCompile(`schema: missing required column: column ("[^"]*") is null at row (\d+)`)

// explain words an error of a command for the person who reads it: a
// null in a required column says so (the column is there; its value is
// null) and how the table came to require it.
func explain(err error) error {
	if err == nil || !errors.Is(err, schema.ErrMissingRequired) || !nullInRequired.MatchString(err.Error()) {
		return err
	}
	msg := nullInRequired.ReplaceAllString(err.Error(), `schema: a null in required column $1 (row $2 of a read batch)`) +
		"; the table declares the column required (icerun create makes every column optional unless -required names it; a required column can be made optional in any Iceberg engine)"
	return &reworded{msg: msg, err: err}
}
