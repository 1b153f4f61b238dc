// Reads one JSON string per line on stdin; for each, decodes the document "v: <string>"
// (the string as a plain scalar) with go-yaml v2 and v3 and prints one JSON line: what
// each library made of it. Run by run.py (tests/crosscheck/go_yaml_resolve/), never by CI.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"time"

	yamlv2 "gopkg.in/yaml.v2"
	yamlv3 "gopkg.in/yaml.v3"
)

type result struct {
	In    string `json:"in"`
	V2    string `json:"v2"`
	V2Str bool   `json:"v2_str"`
	V2TS  bool   `json:"v2_timestamp"`
	V3    string `json:"v3"`
	V3Str bool   `json:"v3_str"`
}

func kind(v interface{}, in string) (string, bool) {
	switch x := v.(type) {
	case string:
		return "string", x == in
	case nil:
		return "null", false
	default:
		return fmt.Sprintf("%T", v), false
	}
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		var in string
		if err := json.Unmarshal(scanner.Bytes(), &in); err != nil {
			panic(err)
		}
		doc := []byte("v: " + in + "\n")
		r := result{In: in}
		var m2 map[string]interface{}
		if err := yamlv2.Unmarshal(doc, &m2); err != nil {
			r.V2 = "error"
		} else {
			r.V2, r.V2Str = kind(m2["v"], in)
			var ts struct{ V time.Time }
			r.V2TS = yamlv2.Unmarshal(doc, &ts) == nil && !ts.V.IsZero()
		}
		var m3 map[string]interface{}
		if err := yamlv3.Unmarshal(doc, &m3); err != nil {
			r.V3 = "error"
		} else {
			r.V3, r.V3Str = kind(m3["v"], in)
		}
		if err := out.Encode(r); err != nil {
			panic(err)
		}
	}
}
