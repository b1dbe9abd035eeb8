package names

import (
	"sync"

	ahpv1 "github.com/ahp-gateway/ahp/gen/ahp/v1"
	"google.golang.org/protobuf/proto"
)

// EventTypeName returns the canonical dotted name of t ("tool.before"), or "" when t has none.
func EventTypeName(t ahpv1.EventType) string {
	eventNamesOnce.Do(loadEventNames)
	return eventNameByType[t]
}

// ParseEventType maps a canonical dotted name back to its EventType.
func ParseEventType(name string) (ahpv1.EventType, bool) {
	eventNamesOnce.Do(loadEventNames)
	t, ok := eventTypeByName[name]
	return t, ok
}

var (
	eventNamesOnce  sync.Once
	eventNameByType map[ahpv1.EventType]string
	eventTypeByName map[string]ahpv1.EventType
)

// loadEventNames reads the event_name option of every EventType value, so the proto file is the
// single source of the canonical names.
func loadEventNames() {
	values := ahpv1.EventType(0).Descriptor().Values()
	eventNameByType = make(map[ahpv1.EventType]string, values.Len())
	eventTypeByName = make(map[string]ahpv1.EventType, values.Len())
	for i := range values.Len() {
		v := values.Get(i)
		name, _ := proto.GetExtension(v.Options(), ahpv1.E_EventName).(string)
		if name == "" {
			continue
		}
		t := ahpv1.EventType(v.Number())
		eventNameByType[t] = name
		eventTypeByName[name] = t
	}
}
