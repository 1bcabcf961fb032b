import { AdmissionQueue, type AdmissionLimits } from './admission-queue.js';
import { AdmissionCoordinator, type ModelAdmission } from './model-admission.js';

/** Admission held in this process: one AdmissionQueue per model (a single-process gateway). */
export class LocalAdmission extends AdmissionCoordinator {
  admissionFor(_model: string, limits: AdmissionLimits): ModelAdmission {
    return new AdmissionQueue(limits);
  }
}
