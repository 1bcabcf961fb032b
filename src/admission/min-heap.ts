/** What a MinHeap holds: it keeps each item's place, so that one can be moved or removed in O(log n). */
export interface HeapItem {
  /** The item's index in its heap; -1 when in none. */
  heapIndex: number;
}

/**
 * A binary min-heap that knows where each item is: push, pop, remove and update (after an
 * item's key changed) each cost O(log n) comparisons. `comparisons` counts them, so that tests
 * can check the bound without timing anything.
 */
export class MinHeap<T extends HeapItem> {
  private readonly items: T[] = [];
  comparisons = 0;

  /** `before(a, b)`: whether `a` comes out before `b`. */
  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    item.heapIndex = this.items.length;
    this.items.push(item);
    this.siftUp(item.heapIndex);
  }

  /** Takes `item` out, wherever it is; nothing when it is in no heap. */
  remove(item: T): void {
    const index = item.heapIndex;
    if (index < 0 || this.items[index] !== item) return;
    const last = this.items.pop()!;
    item.heapIndex = -1;
    if (last === item) return;
    this.items[index] = last;
    last.heapIndex = index;
    this.update(last);
  }

  /** Puts `item` back in order after its key changed. */
  update(item: T): void {
    if (item.heapIndex < 0) return;
    this.siftUp(item.heapIndex);
    this.siftDown(item.heapIndex);
  }

  private comesBefore(a: T, b: T): boolean {
    this.comparisons += 1;
    return this.before(a, b);
  }

  private siftUp(start: number): void {
    let index = start;
    const item = this.items[index];
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.items[parentIndex];
      if (!this.comesBefore(item, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(item, index);
  }

  private siftDown(start: number): void {
    let index = start;
    const item = this.items[index];
    const size = this.items.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && this.comesBefore(this.items[right], this.items[left]) ? right : left;
      if (!this.comesBefore(this.items[child], item)) break;
      this.place(this.items[child], index);
      index = child;
    }
    this.place(item, index);
  }

  private place(item: T, index: number): void {
    this.items[index] = item;
    item.heapIndex = index;
  }
}
