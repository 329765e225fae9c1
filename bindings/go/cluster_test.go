package dinput

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

func TestClusterExplicit(t *testing.T) {
	c, err := NewCluster(1, 4, "tcp://127.0.0.1:5000")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Rank() != 1 || c.WorldSize() != 4 || c.Source() != "explicit" || !c.IsInputWorker() {
		t.Errorf("got rank %d of %d from %q", c.Rank(), c.WorldSize(), c.Source())
	}
	if c.RdzvURL() != "tcp://127.0.0.1:5000" || c.CoordinatorHost() != "127.0.0.1" {
		t.Errorf("got %q at %q", c.RdzvURL(), c.CoordinatorHost())
	}
	if c.LocalRank() != -1 || c.TaskIndex() != -1 || c.TaskType() != "" {
		t.Errorf("unknown fields: %d %d %q", c.LocalRank(), c.TaskIndex(), c.TaskType())
	}
	_, err = NewCluster(4, 4, "")
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArgument || !strings.Contains(e.Message, "got 4") {
		t.Errorf("rank 4 of 4: %v", err)
	}
}

// t.Setenv sets the variables for the C library too (cgo's os.Setenv calls setenv) and
// restores them afterwards; it also forbids t.Parallel, so no other test sees them.
func TestResolveClusterTfConfig(t *testing.T) {
	t.Setenv("TF_CONFIG", `{"cluster": {"chief": ["host0:2222"], "worker": ["host1:2222", "host2:2222"],
		"ps": ["host3:2222"]}, "task": {"type": "worker", "index": 0}}`)
	c, err := ResolveCluster("")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Source() != "tf_config" || c.Rank() != 1 || c.WorldSize() != 3 {
		t.Errorf("worker 0 after the chief: got rank %d of %d from %q", c.Rank(), c.WorldSize(), c.Source())
	}
	if c.TaskType() != "worker" || c.TaskIndex() != 0 || c.RdzvURL() != "tcp://host0:2222" {
		t.Errorf("got task %s:%d, rendezvous %q", c.TaskType(), c.TaskIndex(), c.RdzvURL())
	}
	t.Setenv("TF_CONFIG", `{"cluster": {"worker": ["a:1"]}, "task": {"type": "chief"}}`)
	_, err = ResolveCluster("tf_config")
	var e *Error
	if !errors.As(err, &e) || e.Code != InvalidArgument || !strings.Contains(e.Message, "task.type 'chief'") {
		t.Errorf("a task the cluster lacks: %v", err)
	}
}

// A worker of two listening on 127.0.0.1 while nothing shows that the other runs on this
// host is refused; allowed, it waits for worker 1 (who never comes) until the timeout. The
// job meets at 192.0.2.1 (a documentation address: another host's, as far as the rule can
// tell; worker 0 serves the rendezvous on every interface).
func TestCollectiveFromClusterOptions(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	c, err := NewCluster(0, 2, fmt.Sprintf("tcp://192.0.2.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := &CollectiveOptions{Timeout: 300 * time.Millisecond, JobID: "go-options", Address: "127.0.0.1",
		AllowLoopback: LoopbackRefuse}
	_, err = NewCollectiveFromCluster(c, o)
	var e *Error
	if !strings.Contains(BuildInfo(), `"gloo":{"compiled":true`) {
		if !errors.As(err, &e) || e.Code != Unimplemented {
			t.Errorf("without Gloo: %v", err)
		}
		return
	}
	if !errors.As(err, &e) || e.Code != FailedPrecondition || !strings.Contains(e.Message, "loopback address 127.0.0.1") {
		t.Errorf("refused loopback: %v", err)
	}
	o.AllowLoopback = LoopbackAllow
	_, err = NewCollectiveFromCluster(c, o)
	if !errors.As(err, &e) || e.Code != DeadlineExceeded || !strings.Contains(e.Message, "for worker 1") {
		t.Errorf("allowed loopback: %v", err)
	}
	o.Interface = "lo"
	_, err = NewCollectiveFromCluster(c, o)
	if !errors.As(err, &e) || e.Code != InvalidArgument || !strings.Contains(e.Message, "both an interface") {
		t.Errorf("interface and address: %v", err)
	}
	if _, err = NewCollectiveFromCluster(c, &CollectiveOptions{Timeout: -time.Second}); err == nil {
		t.Error("a negative timeout was accepted")
	}
}
