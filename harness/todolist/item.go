package todolist

// Todo statuses: exactly ACP's PlanEntryStatus triple.
const (
	StatusPending    = "pending"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
)

// Item is one entry of the model's task list.
type Item struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// KnownStatus reports whether s is one of the three statuses.
func KnownStatus(s string) bool {
	switch s {
	case StatusPending, StatusInProgress, StatusCompleted:
		return true
	}
	return false
}
