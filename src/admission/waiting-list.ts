/** What a WaitingList holds: its links live in the item, so that leaving from anywhere costs O(1). */
export interface ListNode<T> {
  previous?: T;
  next?: T;
  /** The list it is in, if any. */
  list?: { remove(item: T): boolean };
}

/** A first-in-first-out list whose items can also leave from the middle (a hang-up, a timeout) in O(1). */
export class WaitingList<T extends ListNode<T>> {
  private head?: T;
  private tail?: T;
  private count = 0;

  get size(): number {
    return this.count;
  }

  get first(): T | undefined {
    return this.head;
  }

  push(item: T): void {
    item.list = this;
    item.previous = this.tail;
    item.next = undefined;
    if (this.tail) this.tail.next = item;
    else this.head = item;
    this.tail = item;
    this.count += 1;
  }

  /** Takes `item` out; false when it was not in this list. */
  remove(item: T): boolean {
    if (item.list !== this) return false;
    if (item.previous) item.previous.next = item.next;
    else this.head = item.next;
    if (item.next) item.next.previous = item.previous;
    else this.tail = item.previous;
    item.previous = item.next = item.list = undefined;
    this.count -= 1;
    return true;
  }
}
