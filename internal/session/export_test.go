package session

// MaxFactLen is the cap on a derived fact's content, in bytes.
const MaxFactLen = maxFactLen
