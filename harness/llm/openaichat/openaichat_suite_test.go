package openaichat_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestOpenAIChat(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "openaichat", Label("tier:unit"))
}
