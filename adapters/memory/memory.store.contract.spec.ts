import { describeStoreContract, describeWindowStoreContract } from '../../lib/store/index.js';
import { MemoryStore } from './memory.store.js';

describeStoreContract('MemoryStore', () => new MemoryStore());
describeStoreContract('MemoryStore (small maxKeys)', () => new MemoryStore({ maxKeys: 100 }));
describeWindowStoreContract('MemoryStore', () => new MemoryStore());
describeWindowStoreContract('MemoryStore (small maxKeys)', () => new MemoryStore({ maxKeys: 100 }));
