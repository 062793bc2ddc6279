//! Bounded histories in stored state (lead samples, wake latencies, scores, verdicts, seen
//! events): each list is kept oldest first and keeps only its newest entries, so an item's size
//! stays bounded however long the target lives.

/// Drops the oldest entries of `entries` (oldest first) beyond the newest `n`.
pub fn keep_newest<T>(entries: &mut Vec<T>, n: usize) {
    let excess = entries.len().saturating_sub(n);
    entries.drain(..excess);
}

#[cfg(test)]
mod tests {
    use super::keep_newest;

    #[test]
    fn keeps_the_last_n_in_order() {
        let mut v = vec![1, 2, 3, 4, 5];
        keep_newest(&mut v, 3);
        assert_eq!(v, [3, 4, 5]);
        keep_newest(&mut v, 10);
        assert_eq!(v, [3, 4, 5]);
        keep_newest(&mut v, 0);
        assert!(v.is_empty());
    }
}
