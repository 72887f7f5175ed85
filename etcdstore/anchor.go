package etcdstore

import (
	"context"
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/reins-go/reins/audit"
)

// ErrAnchorConflict is matched by the error of an anchor for a seq that already holds another
// digest: the run's log is not the chain it anchored before (rewritten, or another log under
// the same run id).
var ErrAnchorConflict = errors.New("etcdstore: an anchor for this seq holds another digest")

// Anchor implements reins.Anchorer: it keeps a under P/anchors/<run>/<seq>, written once (a
// transaction that creates the key only if it does not exist; the same anchor again is not an
// error), then deletes the run's oldest anchors beyond Options.MaxAnchors.
func (s *Store) Anchor(ctx context.Context, a audit.Anchor) error {
	if a.Seq == 0 || a.Digest.IsZero() {
		return fmt.Errorf("etcdstore: anchor seq %d digest %s is not a chain head", a.Seq, a.Digest)
	}
	key := s.v.l.anchor(s.opts.RunID, a.Seq)
	b, err := encode(a)
	if err != nil {
		return err
	}
	cctx, cancel := s.v.call(ctx)
	defer cancel()
	resp, err := s.v.c.Txn(cctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(b))).Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return s.v.clientErr(ctx, err)
	}
	s.reached()
	if !resp.Succeeded {
		kvs := resp.Responses[0].GetResponseRange().GetKvs()
		var old audit.Anchor
		if len(kvs) == 1 {
			if err := decodeStrict(key, kvs[0].Value, &old); err != nil {
				return err
			}
		}
		if old.Digest != a.Digest {
			return fmt.Errorf("%w: %s holds %s, the log's head at seq %d is %s", ErrAnchorConflict, key, old.Digest, a.Seq, a.Digest)
		}
		return nil
	}
	return s.prune(cctx)
}

// prune deletes the run's oldest anchors beyond MaxAnchors.
func (s *Store) prune(ctx context.Context) error {
	dir := s.v.l.anchors(s.opts.RunID)
	n, err := s.v.c.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		return s.v.clientErr(ctx, err)
	}
	extra := n.Count - int64(s.opts.MaxAnchors)
	if extra <= 0 {
		return nil
	}
	old, err := s.v.c.Get(ctx, dir, clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithLimit(extra),
		clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend))
	if err != nil {
		return s.v.clientErr(ctx, err)
	}
	for len(old.Kvs) > 0 {
		k := min(len(old.Kvs), maxTxnOps)
		ops := make([]clientv3.Op, k)
		for i, kv := range old.Kvs[:k] {
			ops[i] = clientv3.OpDelete(string(kv.Key))
		}
		if _, err := s.v.c.Txn(ctx).Then(ops...).Commit(); err != nil {
			return s.v.clientErr(ctx, err)
		}
		old.Kvs = old.Kvs[k:]
	}
	return nil
}
