//! The registry's entity tree, through its public interface.

use integrador::hierarchy::Hierarchy;
use integrador::registry::Registry;

#[test]
fn common_ancestors_climb_both_ends() {
    let mut r = Registry::new(Hierarchy::builtin());
    let (m1, m2) = (r.machine("node01", None), r.machine("node02", None));
    let (p1, p2) = (r.process(m1, 10).unwrap(), r.process(m2, 20).unwrap());
    let (t1, t2) = (r.thread(m1, 10, 11).unwrap(), r.thread(m1, 10, 12).unwrap());
    assert_eq!(r.common_ancestor(t1, t2), Some(p1));
    assert_eq!(r.common_ancestor(t1, p1), Some(p1));
    assert_eq!(r.common_ancestor(p1, t1), Some(p1));
    assert_eq!(r.common_ancestor(t1, t1), Some(t1));
    assert_eq!(r.common_ancestor(t1, m1), Some(m1));
    // Two machines meet at their cluster.
    let c = r.container(m1).parent;
    assert!(c.is_some());
    assert_eq!(r.common_ancestor(t1, p2), c);
    assert_eq!(r.common_ancestor(p2, t2), c);
}
