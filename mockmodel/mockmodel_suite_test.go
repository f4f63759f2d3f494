package mockmodel_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestMockmodel(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "mockmodel", Label("tier:unit"))
}
