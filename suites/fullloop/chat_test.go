package fullloop

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"
	"github.com/onsi/gomega/gexec"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/mockmodel"
)

// chatEnv is the environment without any DeepSeek or todoharness setting
// of the machine running the tests, plus extra.
func chatEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DEEPSEEK_") || strings.HasPrefix(kv, "TODOHARNESS_") || strings.HasPrefix(kv, "OPENAI_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// chatCmd is `todoharness chat` with a fresh sessions directory: this test
// binary, running the command line (see TestMain).
func chatCmd(sessions string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(selfexec.Path(), append([]string{"chat", "--sessions", sessions}, args...)...)
	cmd.Env = append(env, selfexec.Environ("todoharness")...)
	cmd.Dir = GinkgoT().TempDir()
	return cmd
}

// onlySession loads the one session log under dir.
func onlySession(dir string) *session.Loaded {
	GinkgoHelper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	Expect(err).NotTo(HaveOccurred())
	Expect(files).To(HaveLen(1))
	ld, err := session.LoadFile(files[0])
	Expect(err).NotTo(HaveOccurred())
	Expect(session.CheckEvents(ld.Events)).To(Succeed())
	return ld
}

const chatInput = "fix the parser\nand the tests?\n"

var _ = Describe("todoharness chat", Label("binary"), func() {
	// Both models give the same transcript: one golden.
	chatRuns := []struct {
		name  string
		setup func() (env []string, args []string)
	}{
		{"--script (in-process model)", func() ([]string, []string) {
			return chatEnv(), []string{"--script", fixture("chat.yaml")}
		}},
		{"DEEPSEEK_API_KEY (the mock server on 127.0.0.1 as DeepSeek)", func() ([]string, []string) {
			srv := mockmodel.NewServer(loadScript("chat.yaml"))
			DeferCleanup(srv.Close)
			return chatEnv("DEEPSEEK_API_KEY=test-key", "DEEPSEEK_BASE_URL="+srv.BaseURL()), []string{"--model", "mock-model"}
		}},
	}
	for _, run := range chatRuns {
		It("streams text and prints the [todos] checklist on every todo/write, from piped stdin, via "+run.name, func() {
			env, args := run.setup()
			sessions := GinkgoT().TempDir()
			cmd := chatCmd(sessions, env, args...)
			cmd.Stdin = strings.NewReader(chatInput)
			sess, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
			Expect(err).NotTo(HaveOccurred())
			Eventually(sess).WithTimeout(time.Minute).Should(gexec.Exit(0))
			Expect(string(sess.Err.Contents())).To(ContainSubstring("todoharness chat: model"))
			testutil.AssertGolden(GinkgoTB(), "fullloop", "chat", sess.Out.Contents())

			By("persisting the session: two completed turns, the last list current")
			ld := onlySession(sessions)
			ends := ofType(ld.Events, session.TypeTurnEnd)
			Expect(ends).To(HaveLen(2))
			for _, e := range ends {
				Expect(decode[session.TurnEnd](e).Reason.Kind).To(Equal(session.TurnCompleted))
			}
			current, ok := session.CurrentTodos(ld.Events)
			Expect(ok).To(BeTrue())
			Expect(current).To(Equal(items("read the code", "completed", "write the fix", "completed", "run the tests", "in_progress")))
		})
	}

	It("refuses to start without a key or a script, and says --script is required", func() {
		cmd := chatCmd(GinkgoT().TempDir(), chatEnv())
		cmd.Stdin = strings.NewReader(chatInput)
		sess, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		Eventually(sess).WithTimeout(time.Minute).Should(gexec.Exit(2))
		Expect(sess.Err).To(gbytes.Say(`--script FILE is required`))
		Expect(string(sess.Err.Contents())).To(ContainSubstring("DEEPSEEK_API_KEY"))
		Expect(sess.Out.Contents()).To(BeEmpty())
	})

	It("cancels the running turn on Ctrl-C (reason cancelled) and goes on with the next line", func() {
		sessions := GinkgoT().TempDir()
		cmd := chatCmd(sessions, chatEnv(), "--script", fixture("hang.yaml"))
		stdin, err := cmd.StdinPipe()
		Expect(err).NotTo(HaveOccurred())
		sess, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { sess.Kill() })

		_, err = io.WriteString(stdin, "split the work\n")
		Expect(err).NotTo(HaveOccurred())
		Eventually(sess.Out).WithTimeout(time.Minute).Should(gbytes.Say("Thinking"))
		sess.Signal(syscall.SIGINT)
		Eventually(sess.Out).WithTimeout(time.Minute).Should(gbytes.Say(`\[cancelled\]\n`))
		// Still running: it answers the next line (an exit on Ctrl-C would
		// leave "Back." unsaid and one turn/end in the log).
		_, err = io.WriteString(stdin, "once again\n")
		Expect(err).NotTo(HaveOccurred())
		Eventually(sess.Out).WithTimeout(time.Minute).Should(gbytes.Say("Back.\n"))
		Expect(stdin.Close()).To(Succeed())
		Eventually(sess).WithTimeout(time.Minute).Should(gexec.Exit(0))

		ld := onlySession(sessions)
		ends := ofType(ld.Events, session.TypeTurnEnd)
		Expect(ends).To(HaveLen(2))
		Expect(decode[session.TurnEnd](ends[0]).Reason.Kind).To(Equal(session.TurnCancelled))
		Expect(decode[session.TurnEnd](ends[1]).Reason.Kind).To(Equal(session.TurnCompleted))
	})
})
