import { describeStoreContract } from '../../test/utils/store-contract.js';
import { describeWindowStoreContract } from '../../test/utils/window-store-contract.js';
import { MemoryStore } from './memory.store.js';

describeStoreContract('MemoryStore', () => new MemoryStore());
describeStoreContract('MemoryStore (small maxKeys)', () => new MemoryStore({ maxKeys: 100 }));
describeWindowStoreContract('MemoryStore', () => new MemoryStore());
describeWindowStoreContract('MemoryStore (small maxKeys)', () => new MemoryStore({ maxKeys: 100 }));
